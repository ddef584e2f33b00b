; Tag query for Elixir (tree-sitter-elixir). Capture conventions: see src/core/parse/parser.ts.
;
; Every Elixir construct is a macro call: `defmodule Shop.Cart do ... end` is a `call` whose
; target is the identifier `defmodule`, so definitions are told apart by that identifier.

; ---- Definitions ----------------------------------------------------------------------

; Module names are single `alias` tokens (`Shop.Cart`), so a nested `defmodule Item` inside
; `defmodule Shop` is qualified as Shop.Item, and its functions as Shop.Item.name.
((call
  target: (identifier) @_kw
  (arguments . (alias) @name)) @definition.module
  (#eq? @_kw "defmodule"))

; Protocol functions become methods of the protocol (see parser.ts).
((call
  target: (identifier) @_kw
  (arguments . (alias) @name)) @definition.interface
  (#eq? @_kw "defprotocol"))

; `defimpl Proto, for: Type` qualifies its functions by the implementing type, like a Rust
; `impl Trait for Type`; without `for:` (inside the type's own module) by the protocol.
((call
  target: (identifier) @_kw
  (arguments
    (keywords
      (pair
        key: (keyword) @_for
        value: (alias) @name)))) @scope
  (#eq? @_kw "defimpl")
  (#match? @_for "^for:"))

((call
  target: (identifier) @_kw
  (arguments . (alias) @name .)) @scope
  (#eq? @_kw "defimpl"))

; Each clause of a multi-clause function is its own definition (like overloads elsewhere), so
; every clause's chunk names the function.
; def name(args) / def name(args) when guard / def name / def name when guard
((call
  target: (identifier) @_kw
  (arguments
    .
    [
      (call target: (identifier) @name)
      (identifier) @name
      (binary_operator
        left: [
          (call target: (identifier) @name)
          (identifier) @name
        ]
        operator: "when")
    ])) @definition.function
  (#any-of? @_kw "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp"))

; ExUnit tests: test "adds items" do ... end (a test without a body is only a placeholder).
((call
  target: (identifier) @_kw
  (arguments . (string . (quoted_content) @name .))
  (do_block)) @definition.function
  (#eq? @_kw "test"))

; `@callback name(args) :: result`: the head names the callback a behaviour requires. Only the
; head is captured, so the signature stays `name(args)`.
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments
      (binary_operator
        left: (call target: (identifier) @name) @definition.function
        operator: "::")))
  (#any-of? @_attr "callback" "macrocallback"))

; @type t :: ..., @typep t(a) :: ..., @opaque t :: ...
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments
      (binary_operator
        left: [
          (identifier) @name
          (call target: (identifier) @name)
        ]
        operator: "::")))
  (#any-of? @_attr "type" "typep" "opaque")) @definition.type

; ---- References -----------------------------------------------------------------------

; `defimpl Proto, for: Type`: the protocol is an inheritance edge of the type; `@behaviour`
; likewise (before the general alias pattern, since the first pattern to capture a name wins).
((call
  target: (identifier) @_kw
  (arguments . (alias) @name)) @reference.inherit
  (#eq? @_kw "defimpl"))

(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments . (alias) @name))
  (#eq? @_attr "behaviour")) @reference.inherit

; Typespecs: the names in @spec, @type and @callback are types, though `map()` and
; `String.t()` are written as calls. The spec's own head (`@spec fetch(...) :: ...`) names the
; function it describes. Queries cannot match descendants at any depth, so type names are
; taken up to seven levels deep, which covers unions of tuples of lists of named arguments;
; deeper ones fall through to the call patterns below.
((unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments
      [
        (binary_operator
          left: (call target: (identifier) @name)
          operator: "::")
        (binary_operator
          left: (binary_operator
            left: (call target: (identifier) @name)
            operator: "::")
          operator: "when")
      ]))) @reference.call
  (#eq? @_attr "spec"))

((unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments
      [
        (_ (call target: [(identifier) @name (dot right: (identifier) @name)]))
        (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)])))
        (_ (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)]))))
        (_ (_ (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)])))))
        (_ (_ (_ (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)]))))))
        (_ (_ (_ (_ (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)])))))))
        (_ (_ (_ (_ (_ (_ (_ (call target: [(identifier) @name (dot right: (identifier) @name)]))))))))
      ]))) @reference.type
  (#any-of? @_attr "spec" "type" "typep" "opaque" "callback" "macrocallback"))

; Remote calls: Map.update(...) -> update, :ets.new(...), __MODULE__.helper(...), and through a
; variable holding a module when written with parentheses, mod.run(x).
(call
  target: (dot
    left: [(alias) (atom)]
    right: (identifier) @name)) @reference.call

((call
  target: (dot
    left: (identifier) @_mod
    right: (identifier) @name)) @reference.call
  (#eq? @_mod "__MODULE__"))

(call
  target: (dot
    right: (identifier) @name)
  (arguments)) @reference.call

; Without parentheses, value.key reads a map or struct field: cart.total (calls with
; arguments were taken above, and the first pattern to capture a name wins).
(call
  target: (dot
    right: (identifier) @name)) @reference

; Local calls, except the definition and control-flow macros, and except `@doc "..."` and the
; other module attributes: a call right under `@` names an attribute, so it is matched
; everywhere but there.
([
  (source (call target: (identifier) @name))
  (do_block (call target: (identifier) @name))
  (else_block (call target: (identifier) @name))
  (after_block (call target: (identifier) @name))
  (rescue_block (call target: (identifier) @name))
  (catch_block (call target: (identifier) @name))
  (body (call target: (identifier) @name))
  (block (call target: (identifier) @name))
  (arguments (call target: (identifier) @name))
  (binary_operator left: (call target: (identifier) @name))
  (binary_operator right: (call target: (identifier) @name))
  (pair value: (call target: (identifier) @name))
  (list (call target: (identifier) @name))
  (tuple (call target: (identifier) @name))
  (map_content (call target: (identifier) @name))
  (struct (call target: (identifier) @name))
  (bitstring (call target: (identifier) @name))
  (interpolation (call target: (identifier) @name))
  (access_call target: (call target: (identifier) @name))
  (access_call key: (call target: (identifier) @name))
  (dot left: (call target: (identifier) @name))
  (unary_operator
    operator: ["&" "!" "^" "-" "+" "not" "~~~"]
    operand: (call target: (identifier) @name))
] @reference.call
  (#not-any-of? @name
    "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp"
    "defmodule" "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable"
    "alias" "import" "require" "use" "quote" "unquote" "unquote_splicing"
    "if" "unless" "case" "cond" "with" "for" "try" "receive" "fn" "super" "test" "describe"))

; Pipes into a bare name: value |> transform.
(binary_operator
  operator: "|>"
  right: (identifier) @name) @reference.call

; Function captures: &helper/1 (&Mod.fun/1 is a remote call above).
(unary_operator
  operator: "&"
  operand: (binary_operator
    left: (identifier) @name
    operator: "/")) @reference.call

; Module attributes read as values: @default_timeout.
(unary_operator
  operator: "@"
  operand: (identifier) @name) @reference

; Module names: Map in Map.update, %Shop.Cart{}, alias Foo.Bar.
(alias) @name @reference.type

; ---- Imports --------------------------------------------------------------------------

((call
  target: (identifier) @_kw
  (arguments . [(alias) (dot) (atom)])) @import
  (#any-of? @_kw "alias" "import" "require" "use"))
