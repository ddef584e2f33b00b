; Tag query for Kotlin (tree-sitter-grammars/tree-sitter-kotlin). Capture conventions: see
; src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; `interface` and `enum class` share the class_declaration node; the specific patterns come
; first so that they win over the general one.
(class_declaration
  "interface"
  name: (identifier) @name) @definition.interface

(class_declaration
  name: (identifier) @name
  (enum_class_body)) @definition.enum

(class_declaration
  name: (identifier) @name) @definition.class

(object_declaration
  name: (identifier) @name) @definition.class

; Extension functions are qualified by their receiver type: fun String.shout() -> String.shout.
(function_declaration
  (user_type (identifier) @receiver)
  .
  name: (identifier) @name) @definition.method

; Functions inside a class, object or interface body become methods (see parser.ts).
(function_declaration
  name: (identifier) @name) @definition.function

(secondary_constructor
  "constructor" @name) @definition.method

(type_alias
  type: (identifier) @name) @definition.type

((property_declaration
  (modifiers (property_modifier) @_const)
  (variable_declaration (identifier) @name)) @definition.constant
  (#eq? @_const "const"))

(source_file
  (property_declaration
    (variable_declaration (identifier) @name)) @definition.variable)

; ---- References -----------------------------------------------------------------------

(call_expression
  .
  (identifier) @name) @reference.call

(call_expression
  .
  (navigation_expression
    (identifier) @name .)) @reference.call

(user_type (identifier) @name) @reference.type

; obj.prop uses that are not calls.
(navigation_expression
  (identifier) @name .) @reference

; ---- Imports --------------------------------------------------------------------------

(import) @import
