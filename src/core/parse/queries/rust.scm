; Tag query for Rust (tree-sitter-rust). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(type_item
  name: (type_identifier) @name) @definition.type

; Functions inside impl and trait blocks become methods (see parser.ts).
(function_item
  name: (identifier) @name) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

(mod_item
  name: (identifier) @name
  body: (declaration_list)) @definition.module

(macro_definition
  name: (identifier) @name) @definition.macro

; impl blocks qualify their functions by the implementing type: impl Foo { fn bar } -> Foo.bar.
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]) @scope

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (field_expression
    field: (field_identifier) @name)) @reference.call

(call_expression
  function: (scoped_identifier
    name: (identifier) @name)) @reference.call

(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (field_expression field: (field_identifier) @name)
      (scoped_identifier name: (identifier) @name)
    ])) @reference.call

(macro_invocation
  macro: (identifier) @name) @reference.call

; Macro arguments are token trees, not expressions: an identifier followed by a
; parenthesised group is taken as a call (write!(f, "{}", describe(x))).
(token_tree
  (identifier) @name
  .
  (token_tree)) @reference.call

; `impl Trait for Type`: the trait is an inheritance edge of the type (before the general type
; pattern, since the first pattern to capture a name wins).
(impl_item
  trait: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
  ]) @reference.inherit

(type_identifier) @name @reference.type

; Paths and fields that are not calls: Mode::Line, self.buf.
(scoped_identifier
  name: (identifier) @name) @reference

(field_expression
  field: (field_identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(use_declaration) @import

(extern_crate_declaration) @import

; mod foo; pulls in another file.
(mod_item
  name: (identifier)
  !body) @import
