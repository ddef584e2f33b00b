; Local scopes and bindings for Python. Conventions: see locals/typescript.scm. Python's
; class bodies are scopes that the functions inside them do not see; the resolver applies
; that rule, the query only marks them.

[
  (module)
  (function_definition)
  (class_definition)
  (lambda)
  (list_comprehension)
  (dictionary_comprehension)
  (set_comprehension)
  (generator_expression)
] @local.scope

(function_definition name: (identifier) @local.definition)
(class_definition name: (identifier) @local.definition)

; Parameters.
(parameters (identifier) @local.definition)
(lambda_parameters (identifier) @local.definition)
(default_parameter name: (identifier) @local.definition)
(typed_parameter (identifier) @local.definition)
(typed_default_parameter name: (identifier) @local.definition)
(list_splat_pattern (identifier) @local.definition)
(dictionary_splat_pattern (identifier) @local.definition)

; Assignments and other binding forms.
(assignment left: (identifier) @local.definition)
(assignment left: (pattern_list (identifier) @local.definition))
(assignment left: (tuple_pattern (identifier) @local.definition))
(assignment left: (list_pattern (identifier) @local.definition))
(for_statement left: (identifier) @local.definition)
(for_statement left: (pattern_list (identifier) @local.definition))
(for_statement left: (tuple_pattern (identifier) @local.definition))
(for_in_clause left: (identifier) @local.definition)
(for_in_clause left: (pattern_list (identifier) @local.definition))
(for_in_clause left: (tuple_pattern (identifier) @local.definition))
(as_pattern alias: (as_pattern_target (identifier) @local.definition))
(named_expression name: (identifier) @local.definition)
(global_statement (identifier) @local.global)
(nonlocal_statement (identifier) @local.global)

; ---- Imports ------------------------------------------------------------------------------

(import_statement name: (dotted_name . (identifier) @local.import))
(aliased_import alias: (identifier) @local.import)
(import_from_statement name: (dotted_name (identifier) @local.import))
