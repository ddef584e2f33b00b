; Tag query for JavaScript and JSX (tree-sitter-javascript). Capture conventions: see
; src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(class_declaration
  name: (identifier) @name) @definition.class

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; Class fields holding functions: handle = () => {...}
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; const f = () => {...} / const f = function () {...}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; CommonJS: exports.f = function () {...} / module.exports.f = () => {...}
(assignment_expression
  left: (member_expression
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function

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

(class_heritage [
  (identifier) @name
  (member_expression property: (property_identifier) @name)
]) @reference.inherit

; <Component ...> uses count as calls; lower-case names are HTML tags.
((jsx_opening_element
  name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))

((jsx_self_closing_element
  name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))

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

((variable_declaration
  (variable_declarator
    value: (call_expression
      function: (identifier) @_require))) @import
  (#eq? @_require "require"))

((expression_statement
  (call_expression
    function: (identifier) @_require)) @import
  (#eq? @_require "require"))
