; Tag query for Scala 2 and 3 (tree-sitter-scala). Capture conventions: see
; src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; class and case class.
(class_definition
  name: (_) @name) @definition.class

; object and package object are modules; their defs are methods (patterns below).
(object_definition
  name: (_) @name) @definition.module

(package_object
  name: (_) @name) @definition.module

(trait_definition
  name: (_) @name) @definition.trait

(enum_definition
  name: (_) @name) @definition.enum

; Scala 3 enum cases: `case Circle(r: Double)` is a class, `case Red` a constant.
(full_enum_case
  name: (_) @name) @definition.class

(simple_enum_case
  name: (_) @name) @definition.constant

(type_definition
  name: (type_identifier) @name) @definition.type

; A named given with members is an object; a given alias (`given ord: Ordering[Int] = …`) a
; constant. Anonymous givens have no name to find them by.
(given_definition
  name: (_) @name
  body: (with_template_body)) @definition.module

(given_definition
  name: (_) @name) @definition.constant

; Extension methods are qualified by their receiver type: extension (s: String) def shout
; -> String.shout.
(extension_definition
  parameters: (parameters
    .
    (parameter
      type: [
        (type_identifier) @receiver
        (generic_type type: (type_identifier) @receiver)
        (stable_type_identifier (type_identifier) @receiver .)
        (generic_type type: (stable_type_identifier (type_identifier) @receiver .))
      ]))
  ; Not `body:`: the grammar repeats that field for each def, and only the first would match.
  [
    (function_definition name: (_) @name)
    (function_declaration name: (_) @name)
  ] @definition.method)

; Members of objects, package objects and givens are methods, as in classes, traits and enums
; (where parser.ts makes them methods).
(object_definition
  body: (template_body [
    (function_definition name: (_) @name)
    (function_declaration name: (_) @name)
  ] @definition.method))

(package_object
  body: (template_body [
    (function_definition name: (_) @name)
    (function_declaration name: (_) @name)
  ] @definition.method))

(given_definition
  body: (with_template_body [
    (function_definition name: (_) @name)
    (function_declaration name: (_) @name)
  ] @definition.method))

(function_definition
  name: (_) @name) @definition.function

(function_declaration
  name: (_) @name) @definition.function

; vals and vars of a file, a class, an object or a trait (not the locals of a def): a val
; is a constant, a var a variable, abstract ones included.
[
  (compilation_unit
    (val_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.constant)
  (template_body
    (val_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.constant)
  (with_template_body
    (val_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.constant)
]

[
  (compilation_unit
    (val_declaration
      name: (identifier) @name) @definition.constant)
  (template_body
    (val_declaration
      name: (identifier) @name) @definition.constant)
  (with_template_body
    (val_declaration
      name: (identifier) @name) @definition.constant)
]

[
  (compilation_unit
    (var_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.variable)
  (template_body
    (var_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.variable)
  (with_template_body
    (var_definition
      pattern: [
        (identifier) @name
        (identifiers (identifier) @name)
        (tuple_pattern (identifier) @name)
      ]) @definition.variable)
]

[
  (compilation_unit
    (var_declaration
      name: (identifier) @name) @definition.variable)
  (template_body
    (var_declaration
      name: (identifier) @name) @definition.variable)
  (with_template_body
    (var_declaration
      name: (identifier) @name) @definition.variable)
]

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    field: (identifier) @name)) @reference.call

; f[T](x) and obj.f[T](x).
(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (field_expression field: (identifier) @name)
    ])) @reference.call

; `xs map f`, `a max b`: a method called infix (symbolic operators are left out).
(infix_expression
  operator: (identifier) @name) @reference.call

; new Order(...), new mutable.Map[K, V]
(instance_expression [
  (type_identifier) @name
  (generic_type type: (type_identifier) @name)
  (stable_type_identifier (type_identifier) @name .)
  (generic_type type: (stable_type_identifier (type_identifier) @name .))
]) @reference.call

; extends/with: inheritance edges (before the general type pattern, since the first pattern
; to capture a name wins). Not `type:`: only the first of that repeated field would match.
(extends_clause [
  (type_identifier) @name
  (generic_type type: (type_identifier) @name)
  (stable_type_identifier (type_identifier) @name .)
  (generic_type type: (stable_type_identifier (type_identifier) @name .))
  (compound_type [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (stable_type_identifier (type_identifier) @name .)
  ])
]) @reference.inherit

(type_identifier) @name @reference.type

; obj.member uses that are not calls with arguments (in Scala often a parameterless call).
(field_expression
  field: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_declaration) @import
