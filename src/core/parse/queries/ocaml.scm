; Tag query for OCaml (tree-sitter-ocaml). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; Modules: `module Set = struct ... end` qualifies what it defines (Set.add); so does a
; module's signature in an interface (`module Make (O : ORDERED) : sig ... end`). A module
; defined by a path or a functor application (module M = Map.Make (String)) is taken with its
; `module` keyword, so that its signature shows what it is.
(module_binding
  (module_name) @name
  body: (structure)) @definition.module

(module_definition
  (module_binding
    (module_name) @name
    body: (_))) @definition.module

(module_binding
  (module_name) @name) @definition.module

; Module types are interfaces; their `val`s become methods.
(module_type_definition
  (module_type_name) @name) @definition.interface

(class_binding
  (class_name) @name) @definition.class

(class_type_binding
  (class_type_name) @name) @definition.interface

(method_definition
  (method_name) @name) @definition.function

(method_specification
  (method_name) @name) @definition.function

(instance_variable_definition
  (instance_variable_name) @name) @definition.field

; Types: records are structs, other types (variants, aliases, abstract types) types.
(type_binding
  name: (type_constructor) @name
  body: (record_declaration)) @definition.struct

(type_binding
  name: (type_constructor) @name) @definition.type

(field_declaration
  (field_name) @name) @definition.field

(exception_definition
  (constructor_declaration
    (constructor_name) @name)) @definition.type

; let bindings of a module (not local `let ... in`): functions when they take parameters, are
; a `fun`/`function` or rename another value (let add = insert, mostly a function re-exported),
; other values constants. Each binding of `let rec f ... and g ...` is a definition of its own.
; A renaming alone in its `let` is taken with the keyword, so that its signature shows the
; value it renames (let add = insert) rather than stopping at the body.
(compilation_unit
  (value_definition
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      (parameter)) @definition.function))

(structure
  (value_definition
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      (parameter)) @definition.function))

(compilation_unit
  (value_definition
    .
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      body: (value_path))
    .) @definition.function)

(structure
  (value_definition
    .
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      body: (value_path))
    .) @definition.function)

(compilation_unit
  (value_definition
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      body: [(fun_expression) (function_expression) (value_path)]) @definition.function))

(structure
  (value_definition
    (let_binding
      pattern: [
        (value_name) @name
        (parenthesized_operator (_) @name)
      ]
      body: [(fun_expression) (function_expression) (value_path)]) @definition.function))

((compilation_unit
  (value_definition
    (let_binding
      pattern: (value_name) @name) @definition.constant))
  (#not-eq? @name "_"))

((structure
  (value_definition
    (let_binding
      pattern: (value_name) @name) @definition.constant))
  (#not-eq? @name "_"))

; external and val (interfaces, signatures): functions when their type is one.
(external
  [
    (value_name) @name
    (parenthesized_operator (_) @name)
  ]) @definition.function

(value_specification
  [
    (value_name) @name
    (parenthesized_operator (_) @name)
  ]
  type: [
    (function_type)
    (polymorphic_type type: (function_type))
    (parenthesized_type (function_type))
  ]) @definition.function

(value_specification
  [
    (value_name) @name
    (parenthesized_operator (_) @name)
  ]) @definition.constant

; ---- References -----------------------------------------------------------------------

(application_expression
  function: (value_path
    (value_name) @name)) @reference.call

; x |> f and f @@ x apply f.
((infix_expression
  operator: (_) @_op
  right: (value_path
    (value_name) @name)) @reference.call
  (#eq? @_op "|>"))

((infix_expression
  left: (value_path
    (value_name) @name)
  operator: (_) @_op) @reference.call
  (#eq? @_op "@@"))

(method_invocation
  method: (method_name) @name) @reference.call

(new_expression
  (class_path
    (class_name) @name)) @reference.call

; Functor applications: Map.Make (String).
(module_application
  functor: (module_path
    (module_name) @name)) @reference.call

; Classes inherited.
(inheritance_definition
  class: [
    (class_path (class_name) @name)
    (instantiated_class (class_path (class_name) @name))
    (class_application class: (class_path (class_name) @name))
    (class_application class: (instantiated_class (class_path (class_name) @name)))
  ]) @reference.inherit

(inheritance_specification
  class_type: (class_type_path
    (class_type_name) @name)) @reference.inherit

; Types, module types and constructors (variants, exceptions) in expressions and patterns.
(type_constructor_path
  (type_constructor) @name) @reference.type

(module_type_path
  (module_type_name) @name) @reference.type

(constructor_path
  (constructor_name) @name) @reference.type

; Values that are not applied: functions passed as arguments or combined by operators, a
; binding that renames another (let add = insert), qualified names (M.empty), record fields.
(application_expression
  argument: (value_path
    (value_name) @name)) @reference

(infix_expression
  left: (value_path
    (value_name) @name)) @reference

(infix_expression
  right: (value_path
    (value_name) @name)) @reference

(let_binding
  body: (value_path
    (value_name) @name)) @reference

(value_path
  (module_path)
  (value_name) @name) @reference

(field_get_expression
  field: (field_path
    (field_name) @name)) @reference

; ---- Imports --------------------------------------------------------------------------

(open_module) @import

(include_module) @import

(include_module_type) @import
