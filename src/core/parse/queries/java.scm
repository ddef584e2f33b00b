; Tag query for Java (tree-sitter-java). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(compact_constructor_declaration
  name: (identifier) @name) @definition.method

; static final fields are constants; interface fields are implicitly so.
(field_declaration
  (modifiers "static" "final")
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.constant

(interface_body
  (constant_declaration
    declarator: (variable_declarator
      name: (identifier) @name)) @definition.constant)

; ---- References -----------------------------------------------------------------------

(method_invocation
  name: (identifier) @name) @reference.call

(object_creation_expression
  type: [
    (type_identifier) @name
    (generic_type (type_identifier) @name)
    (scoped_type_identifier (type_identifier) @name .)
  ]) @reference.call

; Superclass and implemented/extended interfaces: inheritance edges (before the general type
; pattern, since the first pattern to capture a name wins).
(superclass [
  (type_identifier) @name
  (generic_type (type_identifier) @name)
  (scoped_type_identifier (type_identifier) @name .)
]) @reference.inherit

(super_interfaces (type_list [
  (type_identifier) @name
  (generic_type (type_identifier) @name)
])) @reference.inherit

(extends_interfaces (type_list [
  (type_identifier) @name
  (generic_type (type_identifier) @name)
])) @reference.inherit

(type_identifier) @name @reference.type

(marker_annotation
  name: (identifier) @name) @reference.type

(annotation
  name: (identifier) @name) @reference.type

; obj.field and Type.CONSTANT uses.
(field_access
  field: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_declaration) @import
