; Tag query for C# (tree-sitter-c-sharp). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(destructor_declaration
  name: (identifier) @name) @definition.method

(operator_declaration
  "operator" @name) @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function

(namespace_declaration
  name: [(identifier) (qualified_name)] @name) @definition.module

((field_declaration
  (modifier) @_const
  (variable_declaration
    (variable_declarator
      name: (identifier) @name))) @definition.constant
  (#eq? @_const "const"))

; ---- References -----------------------------------------------------------------------

(invocation_expression
  function: (identifier) @name) @reference.call

(invocation_expression
  function: (member_access_expression
    name: [(identifier) @name (generic_name (identifier) @name)])) @reference.call

(invocation_expression
  function: (generic_name
    (identifier) @name)) @reference.call

(object_creation_expression
  type: [(identifier) @name (generic_name (identifier) @name) (qualified_name name: (identifier) @name)]) @reference.call

; Type positions: declarations, parameters, return types, base lists, generic arguments.
(_ type: (identifier) @name) @reference.type

(_ returns: (identifier) @name) @reference.type

(generic_name (identifier) @name) @reference.type

(type_argument_list (identifier) @name) @reference.type

(base_list (identifier) @name) @reference.inherit

(base_list (qualified_name name: (identifier) @name)) @reference.inherit

(base_list (generic_name (identifier) @name)) @reference.inherit

(attribute
  name: (identifier) @name) @reference.type

(nullable_type (identifier) @name) @reference.type

(array_type (identifier) @name) @reference.type

; obj.Member uses that are not calls.
(member_access_expression
  name: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(using_directive) @import
