; Tag query for Go (tree-sitter-go). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

; Methods are qualified by their receiver type: func (z *Writer) Close() -> Writer.Close.
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.method

; Interface methods; the enclosing interface qualifies them.
(method_elem
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

; Package-level constants and variables only; locals are not symbols.
(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))

(source_file
  (var_declaration
    (var_spec
      name: (identifier) @name) @definition.variable))

(source_file
  (var_declaration
    (var_spec_list
      (var_spec
        name: (identifier) @name) @definition.variable)))

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (selector_expression
    field: (field_identifier) @name)) @reference.call

; Embedded struct fields and embedded interfaces: Go's inheritance edges (before the general
; type pattern, since the first pattern to capture a name wins).
(field_declaration
  !name
  type: [
    (type_identifier) @name
    (pointer_type (type_identifier) @name)
    (qualified_type name: (type_identifier) @name)
    (pointer_type (qualified_type name: (type_identifier) @name))
  ]) @reference.inherit

(interface_type
  (type_elem [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
  ])) @reference.inherit

(type_identifier) @name @reference.type

; pkg.Name and value.Field uses that are not calls.
(selector_expression
  field: (field_identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_spec) @import
