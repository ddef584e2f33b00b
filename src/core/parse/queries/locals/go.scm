; Local scopes and bindings for Go. Conventions: see locals/typescript.scm. Package-level
; names span every file of the directory; the resolver looks those up in the index.

[
  (source_file)
  (function_declaration)
  (method_declaration)
  (func_literal)
  (block)
  (if_statement)
  (for_statement)
  (expression_switch_statement)
  (type_switch_statement)
  (select_statement)
  (expression_case)
  (type_case)
  (communication_case)
  (default_case)
] @local.scope

(function_declaration name: (identifier) @local.definition)
(method_declaration name: (field_identifier) @local.definition)
(type_spec name: (type_identifier) @local.definition)
(type_alias name: (type_identifier) @local.definition)
(parameter_declaration name: (identifier) @local.definition)
(variadic_parameter_declaration name: (identifier) @local.definition)
(type_parameter_declaration name: (identifier) @local.definition)
(short_var_declaration left: (expression_list (identifier) @local.definition))
(var_spec name: (identifier) @local.definition)
(const_spec name: (identifier) @local.definition)
(range_clause left: (expression_list (identifier) @local.definition))
(type_switch_statement alias: (expression_list (identifier) @local.definition))
(receive_statement left: (expression_list (identifier) @local.definition))
(labeled_statement label: (label_name) @local.definition)

(import_spec name: (package_identifier) @local.import)
