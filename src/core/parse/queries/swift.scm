; Tag query for Swift (tree-sitter-swift). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; class, struct, enum, actor and extension all parse as class_declaration.
(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name) @definition.enum

(class_declaration
  declaration_kind: ["class" "actor"]
  name: (type_identifier) @name) @definition.class

; Extensions qualify their members by the extended type without defining it.
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name)) @scope

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

; Functions inside a type body become methods (see parser.ts).
(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.method

(init_declaration
  "init" @name) @definition.method

(typealias_declaration
  name: (type_identifier) @name) @definition.type

; Top-level `let` is a constant, `var` a variable.
((source_file
  (property_declaration
    (value_binding_pattern) @_let
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.constant)
  (#eq? @_let "let"))

(source_file
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable)

; ---- References -----------------------------------------------------------------------

(call_expression
  (simple_identifier) @name) @reference.call

(call_expression
  (navigation_expression
    suffix: (navigation_suffix
      suffix: (simple_identifier) @name))) @reference.call

(user_type (type_identifier) @name) @reference.type

; obj.prop uses that are not calls.
(navigation_suffix
  suffix: (simple_identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_declaration) @import
