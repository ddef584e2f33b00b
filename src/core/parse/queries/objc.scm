; Tag query for Objective-C (tree-sitter-objc, which extends tree-sitter-c). Capture
; conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; A class is one symbol, its @implementation, which holds its code. An @interface (the
; declaration in a header, a class extension `@interface X ()` or a category
; `@interface X (Name)`) and a category's @implementation qualify their members as `X.member`
; without defining X again.
(class_implementation
  "@implementation"
  .
  (identifier) @name
  category: (identifier)) @scope

(class_implementation
  "@implementation"
  .
  (identifier) @name) @definition.class

(class_interface
  "@interface"
  .
  (identifier) @name) @scope

(protocol_declaration
  "@protocol"
  .
  (identifier) @name) @definition.interface

; Methods are named by their selector's first part: `- (id)initWithURL:(NSURL *)url` is
; initWithURL; the signature keeps the whole selector.
(method_definition
  (method_type)
  .
  (identifier) @name) @definition.method

(method_definition
  .
  (identifier) @name) @definition.method

(method_declaration
  (method_type)
  .
  (identifier) @name) @definition.method

(method_declaration
  .
  (identifier) @name) @definition.method

(property_declaration
  (struct_declaration
    (struct_declarator [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (function_declarator
        declarator: (parenthesized_declarator (block_pointer_declarator declarator: (identifier) @name)))
    ]))) @definition.field

(instance_variable
  (struct_declaration
    (struct_declarator [
      (identifier) @name
      (pointer_declarator declarator: (identifier) @name)
    ]))) @definition.field

; typedef NS_ENUM(NSInteger, State) { StateIdle, StateRunning };
; The grammar does not know these macros and recovers with ERROR nodes, in one of two shapes:
; the name as the macro's `type`, or as an identifier in an ERROR after it. Cases with `= value`
; leave the whole typedef as ERROR; then only the macro line is found.
((type_definition
  type: (macro_type_specifier
    name: (identifier) @_macro
    (ERROR)
    .
    type: (type_descriptor type: (type_identifier) @name))) @definition.enum
  (#match? @_macro "^(NS|CF)_(ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)$"))

((type_definition
  type: (macro_type_specifier
    name: (identifier) @_macro
    type: (type_descriptor)
    .
    (ERROR . (identifier) @name))) @definition.enum
  (#match? @_macro "^(NS|CF)_(ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)$"))

((macro_type_specifier
  name: (identifier) @_macro
  (ERROR)
  .
  type: (type_descriptor type: (type_identifier) @name)) @definition.enum
  (#match? @_macro "^(NS|CF)_(ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)$"))

((macro_type_specifier
  name: (identifier) @_macro
  type: (type_descriptor)
  .
  (ERROR . (identifier) @name)) @definition.enum
  (#match? @_macro "^(NS|CF)_(ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)$"))

; Its cases, which the recovered tree lists as the typedef's declarators.
((type_definition
  type: (macro_type_specifier name: (identifier) @_macro)
  declarator: (type_identifier) @name @definition.constant)
  (#match? @_macro "^(NS|CF)_(ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)$"))

; ---- C definitions (as in c.scm) ----

(function_definition
  declarator: (function_declarator
    declarator: (identifier) @name)) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (identifier) @name))) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name)))) @definition.function

; Prototypes at file level (the API of a header). A macro the grammar does not know, such as
; NS_ASSUME_NONNULL_BEGIN, reads as the type of a declaration that swallows what follows it.
((translation_unit
  (declaration
    type: (_) @_type
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
    ]) @definition.function)
  (#not-match? @_type "_(BEGIN|END)$"))

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

; Typedefs of anything but a macro (NS_ENUM and the like, above).
(type_definition
  type: [
    (primitive_type)
    (type_identifier)
    (sized_type_specifier)
    (struct_specifier)
    (union_specifier)
    (enum_specifier)
    (generic_specifier)
    (typedefed_specifier)
    (typeof_specifier)
    (array_type_specifier)
  ]
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
    (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))
    (function_declarator declarator: (parenthesized_declarator (block_pointer_declarator declarator: (type_identifier) @name)))
  ]) @definition.type

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.macro

; File-level variables; const-qualified ones are constants, including the Objective-C idiom
; `NSString * const kName = @"…";` where the const qualifies the pointer.
((translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
    ]) @definition.constant)
  (#eq? @_const "const"))

((translation_unit
  (declaration
    declarator: [
      (pointer_declarator (type_qualifier) @_const declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator (type_qualifier) @_const declarator: (identifier) @name))
    ]) @definition.constant)
  (#eq? @_const "const"))

((translation_unit
  (declaration
    type: (_) @_type
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (init_declarator declarator: (array_declarator declarator: (identifier) @name))
      (array_declarator declarator: (identifier) @name)
    ]) @definition.variable)
  (#not-match? @_type "_(BEGIN|END)$"))

; ---- References -----------------------------------------------------------------------

; Superclass and adopted protocols: inheritance edges (before the general type pattern, since
; the first pattern to capture a name wins). Angle brackets before the superclass are
; generic parameters (`@interface Box<T> : NSObject <NSCopying>`).
(class_interface
  superclass: (identifier) @name) @reference.inherit

(class_implementation
  superclass: (identifier) @name) @reference.inherit

(class_interface
  superclass: (identifier)
  .
  (parameterized_arguments (type_name (type_identifier) @name))) @reference.inherit

; `@interface X () <P>` and `@interface X (Category) <P>`.
(class_interface
  ")"
  .
  (parameterized_arguments (type_name (type_identifier) @name))) @reference.inherit

(protocol_declaration
  (protocol_reference_list (identifier) @name)) @reference.inherit

; The class an @interface, a category or a class extension is about.
(class_interface
  "@interface"
  .
  (identifier) @name) @reference.type

(class_implementation
  "@implementation"
  .
  (identifier) @name) @reference.type

; Message sends, by the selector's first part: [obj doThing:x with:y] calls doThing.
(message_expression
  receiver: (_)
  .
  method: (identifier) @name) @reference.call

; @selector(doThing:with:) names a method that is called later.
(selector_expression
  .
  (identifier) @name) @reference.call

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    field: (field_identifier) @name)) @reference.call

; [NSData data]: a class as a message receiver.
((message_expression
  receiver: (identifier) @name) @reference.type
  (#match? @name "^[A-Z]"))

(type_identifier) @name @reference.type

; id<Protocol>, @class and @protocol forward declarations.
(protocol_reference_list (identifier) @name) @reference.type

(class_declaration (identifier) @name) @reference.type

(protocol_forward_declaration (identifier) @name) @reference.type

; obj.property and s->field uses that are not calls.
(field_expression
  field: (field_identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(preproc_include) @import

(module_import) @import
