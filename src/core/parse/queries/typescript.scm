; Tag query for TypeScript (tree-sitter-typescript). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

; Overload signatures and `declare function`.
(function_signature
  name: (identifier) @name) @definition.function

(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

; namespace Foo { ... }
(internal_module
  name: [(identifier) (nested_identifier)] @name) @definition.module

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

(abstract_method_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; Class fields holding functions: handle = () => {...}
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; Properties of interfaces and object types (`readonly code: "too_big"`, `{ unit: string }`), and
; class fields holding values. Their container is the interface, type, class or function they
; belong to, so that `issue.maximum` has candidates even when the type of `issue` is unknown.
; After the function-valued field pattern above: the first pattern to capture a name wins.
(property_signature
  name: [(property_identifier) (private_property_identifier)] @name) @definition.field

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.field

; const f = () => {...} / const f = function () {...}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Exported constants, and upper-case module-level constants.
(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name) @definition.constant))

((program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name) @definition.constant))
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

; ---- References -----------------------------------------------------------------------

(call_expression
  function: (identifier) @name) @reference.call

(call_expression
  function: (member_expression
    property: [(property_identifier) (private_property_identifier)] @name)) @reference.call

(new_expression
  constructor: (identifier) @name) @reference.call

(decorator (identifier) @name) @reference.call

;; Superclasses, implemented interfaces and extended interfaces: inheritance edges. They go
;; before the general type pattern, since the first pattern to capture a name wins.
(extends_clause
  value: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]) @reference.inherit

(implements_clause [
  (type_identifier) @name
  (generic_type name: (type_identifier) @name)
  (nested_type_identifier name: (type_identifier) @name)
]) @reference.inherit

(extends_type_clause [
  (type_identifier) @name
  (generic_type name: (type_identifier) @name)
  (nested_type_identifier name: (type_identifier) @name)
]) @reference.inherit

(type_identifier) @name @reference.type

; obj.prop uses that are not calls.
(member_expression
  property: [(property_identifier) (private_property_identifier)] @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_statement) @import

(export_statement
  source: (string)) @import

((lexical_declaration
  (variable_declarator
    value: (call_expression
      function: (identifier) @_require))) @import
  (#eq? @_require "require"))
