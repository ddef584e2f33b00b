; Local scopes and bindings for TypeScript (and TSX), in the style of nvim-treesitter's
; `locals.scm`. The navigation chain resolves an identifier to the nearest enclosing scope
; that binds its name. Conventions:
; - `@local.scope`: a node that opens a scope;
; - `@local.definition`: an identifier that binds a name in its nearest enclosing scope (a
;   declaration's own name binds in the scope around the declaration, not inside it);
; - `@local.import`: a binding made by an import (followed to the imported definition).

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
  (abstract_class_declaration)
  (class)
  (interface_declaration)
  (type_alias_declaration)
  (function_signature)
  (method_signature)
] @local.scope

; ---- Declarations -------------------------------------------------------------------------

(function_declaration name: (identifier) @local.definition)
(generator_function_declaration name: (identifier) @local.definition)
(function_signature name: (identifier) @local.definition)
(class_declaration name: (type_identifier) @local.definition)
(abstract_class_declaration name: (type_identifier) @local.definition)
(interface_declaration name: (type_identifier) @local.definition)
(type_alias_declaration name: (type_identifier) @local.definition)
(enum_declaration name: (identifier) @local.definition)
(internal_module name: (identifier) @local.definition)
(type_parameter name: (type_identifier) @local.definition)

(variable_declarator name: (identifier) @local.definition)

; Destructuring, at any depth.
(object_pattern (shorthand_property_identifier_pattern) @local.definition)
(pair_pattern value: (identifier) @local.definition)
(array_pattern (identifier) @local.definition)
(rest_pattern (identifier) @local.definition)
(object_assignment_pattern left: (shorthand_property_identifier_pattern) @local.definition)
(assignment_pattern left: (identifier) @local.definition)

; Parameters.
(required_parameter pattern: (identifier) @local.definition)
(optional_parameter pattern: (identifier) @local.definition)
(arrow_function parameter: (identifier) @local.definition)
(catch_clause parameter: (identifier) @local.definition)
(for_in_statement left: (identifier) @local.definition)

; ---- Imports ------------------------------------------------------------------------------

(import_specifier alias: (identifier) @local.import)
(import_specifier name: (identifier) @local.import !alias)
(import_clause (identifier) @local.import)
(namespace_import (identifier) @local.import)
