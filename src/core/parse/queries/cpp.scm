; Tag query for C++ (tree-sitter-cpp). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; Out-of-line member definitions are qualified by their class: double Circle::area() -> Circle.area.
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: [
        (namespace_identifier) @receiver
        (template_type name: (type_identifier) @receiver)
      ]
      name: [(identifier) (destructor_name) (operator_name)] @name))) @definition.method

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier
        scope: [
          (namespace_identifier) @receiver
          (template_type name: (type_identifier) @receiver)
        ]
        name: [(identifier) (operator_name)] @name)))) @definition.method

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier
        scope: [
          (namespace_identifier) @receiver
          (template_type name: (type_identifier) @receiver)
        ]
        name: [(identifier) (operator_name)] @name)))) @definition.method

; Functions, and member functions defined inside their class (made methods by nesting).
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @definition.function

(function_definition
  declarator: [
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
  ]) @definition.function

; Member function declarations inside a class body.
(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.method

(field_declaration
  declarator: [
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(field_identifier) (operator_name)] @name))
  ]) @definition.method

(field_declaration_list
  (declaration
    declarator: (function_declarator
      declarator: [(identifier) (destructor_name)] @name)) @definition.method)

; Prototypes at file or namespace level.
(translation_unit
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(declaration_list
  (declaration
    declarator: [
      (function_declarator declarator: (identifier) @name)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
      (reference_declarator (function_declarator declarator: (identifier) @name))
    ]) @definition.function)

(class_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.module

(type_definition
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
  ]) @definition.type

(alias_declaration
  name: (type_identifier) @name) @definition.type

(concept_definition
  name: (identifier) @name) @definition.type

(preproc_def
  name: (identifier) @name) @definition.constant

(preproc_function_def
  name: (identifier) @name) @definition.macro

; File- and namespace-level variables; const/constexpr ones are constants.
((translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator
      declarator: (identifier) @name)) @definition.constant)
  (#match? @_const "^const"))

((declaration_list
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator
      declarator: (identifier) @name)) @definition.constant)
  (#match? @_const "^const"))

(translation_unit
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
    ]) @definition.variable)

(declaration_list
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
    ]) @definition.variable)

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    field: (field_identifier) @name)) @reference.call

(call_expression
  function: (qualified_identifier
    name: (identifier) @name)) @reference.call

(call_expression
  function: (template_function
    name: (identifier) @name)) @reference.call

(call_expression
  function: (qualified_identifier
    name: (template_function
      name: (identifier) @name))) @reference.call

(new_expression
  type: (type_identifier) @name) @reference.call

; Base classes: inheritance edges (before the general type pattern; the first pattern wins).
(base_class_clause [
  (type_identifier) @name
  (qualified_identifier name: (type_identifier) @name)
  (template_type name: (type_identifier) @name)
]) @reference.inherit

(type_identifier) @name @reference.type

(field_expression
  field: (field_identifier) @name) @reference

(qualified_identifier
  name: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(preproc_include) @import

(using_declaration) @import
