; Tag query for PHP (tree-sitter-php). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method

(const_declaration
  (const_element
    (name) @name) @definition.constant)

; Braced namespaces enclose their declarations; `namespace X;` does not.
(namespace_definition
  name: (namespace_name) @name
  body: (compound_statement)) @definition.module

; ---- References -----------------------------------------------------------------------

(function_call_expression
  function: [(name) @name (qualified_name (name) @name .)]) @reference.call

(member_call_expression
  name: (name) @name) @reference.call

(nullsafe_member_call_expression
  name: (name) @name) @reference.call

(scoped_call_expression
  name: (name) @name) @reference.call

(object_creation_expression
  [(name) @name (qualified_name (name) @name .)]) @reference.call

(named_type [(name) @name (qualified_name (name) @name .)]) @reference.type

(base_clause [(name) @name (qualified_name (name) @name .)]) @reference.type

(class_interface_clause [(name) @name (qualified_name (name) @name .)]) @reference.type

(attribute [(name) @name (qualified_name (name) @name .)]) @reference.type

(use_declaration [(name) @name (qualified_name (name) @name .)]) @reference.type

(scoped_call_expression
  scope: [(name) @name (qualified_name (name) @name .)]) @reference.type

(class_constant_access_expression
  . [(name) @name (qualified_name (name) @name .)]) @reference.type

; $obj->prop uses that are not calls.
(member_access_expression
  name: (name) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(namespace_use_declaration) @import

(expression_statement
  [
    (require_expression)
    (require_once_expression)
    (include_expression)
    (include_once_expression)
  ] @import)
