; Local scopes and bindings for JavaScript. Conventions: see locals/typescript.scm.

[
  (program)
  (statement_block)
  (function_declaration)
  (generator_function_declaration)
  (function_expression)
  (generator_function)
  (arrow_function)
  (method_definition)
  (for_statement)
  (for_in_statement)
  (catch_clause)
  (class_declaration)
  (class)
] @local.scope

(function_declaration name: (identifier) @local.definition)
(generator_function_declaration name: (identifier) @local.definition)
(class_declaration name: (identifier) @local.definition)

(variable_declarator name: (identifier) @local.definition)

(object_pattern (shorthand_property_identifier_pattern) @local.definition)
(pair_pattern value: (identifier) @local.definition)
(array_pattern (identifier) @local.definition)
(rest_pattern (identifier) @local.definition)
(object_assignment_pattern left: (shorthand_property_identifier_pattern) @local.definition)
(assignment_pattern left: (identifier) @local.definition)

(formal_parameters (identifier) @local.definition)
(arrow_function parameter: (identifier) @local.definition)
(catch_clause parameter: (identifier) @local.definition)
(for_in_statement left: (identifier) @local.definition)

(import_specifier alias: (identifier) @local.import)
(import_specifier name: (identifier) @local.import !alias)
(import_clause (identifier) @local.import)
(namespace_import (identifier) @local.import)
