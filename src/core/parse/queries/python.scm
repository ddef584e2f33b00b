; Tag query for Python (tree-sitter-python). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(class_definition
  name: (identifier) @name) @definition.class

; Functions inside a class body become methods (see parser.ts).
(function_definition
  name: (identifier) @name) @definition.function

; Module-level assignments: upper-case names are constants, others variables.
((module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.constant))
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.variable))

; ---- References -----------------------------------------------------------------------

(call
  function: (identifier) @name) @reference.call

(call
  function: (attribute
    attribute: (identifier) @name)) @reference.call

(decorator (identifier) @name) @reference.call

(decorator (attribute attribute: (identifier) @name)) @reference.call

(type (identifier) @name) @reference.type

(generic_type (identifier) @name) @reference.type

(type (attribute attribute: (identifier) @name)) @reference.type

(class_definition
  superclasses: (argument_list [
    (identifier) @name
    (attribute attribute: (identifier) @name)
  ])) @reference.inherit

; obj.attr uses that are not calls.
(attribute
  attribute: (identifier) @name) @reference

; ---- Imports --------------------------------------------------------------------------

(import_statement) @import

(import_from_statement) @import

(future_import_statement) @import
