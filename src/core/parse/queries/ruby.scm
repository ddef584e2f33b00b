; Tag query for Ruby (tree-sitter-ruby). Capture conventions: see src/core/parse/parser.ts.

; ---- Definitions ----------------------------------------------------------------------

(class
  name: [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ]) @definition.class

(module
  name: [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ]) @definition.module

; def inside a class becomes a method (see parser.ts); def self.x is always one.
(method
  name: (_) @name) @definition.function

(singleton_method
  name: (_) @name) @definition.method

(assignment
  left: (constant) @name) @definition.constant

; ---- References -----------------------------------------------------------------------

(call
  method: [(identifier) (constant)] @name) @reference.call

(superclass (constant) @name) @reference.inherit

(superclass (scope_resolution name: (constant) @name)) @reference.inherit

(scope_resolution
  name: (constant) @name) @reference.type

; Constants used as values: JSON, DEFAULT_CURRENCY.
(constant) @name @reference

; ---- Imports --------------------------------------------------------------------------

((call
  method: (identifier) @_require) @import
  (#match? @_require "^(require|require_relative|load|autoload)$"))
