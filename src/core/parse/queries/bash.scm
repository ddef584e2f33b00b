; Tag query for Bash (tree-sitter-bash). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

; Both `f() { ... }` and `function f { ... }` (with or without parentheses, any body).
(function_definition
  name: (word) @name) @definition.function

; Read-only variables at file level: `readonly NAME=...`, `declare -r NAME=...`. Plain
; assignments are left out: scripts reassign the same variables freely.
(program
  (declaration_command
    "readonly"
    (variable_assignment
      name: (variable_name) @name)) @definition.constant)

((program
  (declaration_command
    ["declare" "typeset"]
    (word) @_flags
    (variable_assignment
      name: (variable_name) @name)) @definition.constant)
  (#match? @_flags "^-[a-zA-Z]*r"))

; ---- References -----------------------------------------------------------------------

; Every command run by a literal name: functions, builtins and programs alike.
(command
  name: (command_name
    (word) @name)) @reference.call

; ---- Imports --------------------------------------------------------------------------

((command
  name: (command_name
    (word) @_source)) @import
  (#match? @_source "^(source|\\.)$"))
