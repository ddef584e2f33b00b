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

; A method's name is in no scope: it is selected through its receiver's type.
(function_declaration name: (identifier) @local.definition)
(type_spec name: (type_identifier) @local.definition)
(type_alias name: (type_identifier) @local.definition)
; Parameters bind in the function they belong to; those of an interface method or a function
; type (`Quantize(p color.Palette, m image.Image)`) bind nothing.
(function_declaration [parameters: (parameter_list (parameter_declaration name: (identifier) @local.definition)) result: (parameter_list (parameter_declaration name: (identifier) @local.definition))])
(method_declaration [receiver: (parameter_list (parameter_declaration name: (identifier) @local.definition)) parameters: (parameter_list (parameter_declaration name: (identifier) @local.definition)) result: (parameter_list (parameter_declaration name: (identifier) @local.definition))])
(func_literal [parameters: (parameter_list (parameter_declaration name: (identifier) @local.definition)) result: (parameter_list (parameter_declaration name: (identifier) @local.definition))])
(function_declaration parameters: (parameter_list (variadic_parameter_declaration name: (identifier) @local.definition)))
(method_declaration parameters: (parameter_list (variadic_parameter_declaration name: (identifier) @local.definition)))
(func_literal parameters: (parameter_list (variadic_parameter_declaration name: (identifier) @local.definition)))
(type_parameter_declaration name: (identifier) @local.definition)
(short_var_declaration left: (expression_list (identifier) @local.definition))
(var_spec name: (identifier) @local.definition)
(const_spec name: (identifier) @local.definition)
(range_clause left: (expression_list (identifier) @local.definition))
(type_switch_statement alias: (expression_list (identifier) @local.definition))
(receive_statement left: (expression_list (identifier) @local.definition))
(labeled_statement label: (label_name) @local.definition)

(import_spec name: (package_identifier) @local.import)
