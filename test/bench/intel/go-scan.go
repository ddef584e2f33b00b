// Command go-scan lists the use sites and declarations of the Go standard library's `std`
// module for the code-intelligence gold (build-gold.ts runs it; the Go toolchain's own
// packages only, nothing downloaded). It plays the part Python's ast plays for Django: use
// sites and their kinds come from the syntax tree and go/types, never from the language
// server, which is asked only for the answers.
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go run go-scan.go ROOT > scan.jsonl
//
// ROOT is the module's directory (GOROOT/src). The packages are those of `go list std` for
// linux/amd64 without cgo, the build gopls sees with the same environment: every directory
// under ROOT except cmd/ (its own module), testdata/ and `_`/`.` directories, with the files
// go/build selects (GoFiles, TestGoFiles, XTestGoFiles). Each package is type-checked with its
// in-package tests, and its external tests as a package of their own, by go/types with the
// source importer; type errors (an external test using an export_test.go helper the imported
// package lacks) leave some uses unresolved, and those are simply not candidates.
//
// Output, one JSON object per line:
//   - {"scope": [paths]}: every file of those packages (gopls's view of the module).
//   - {"path", "package", "uses": [[line, col, name, kind, target]], "decls": [[line, col, name, kind, qualified]]}
//     per file in scope. Lines are 1-based; columns 1-based UTF-16 code units (LSP's unit).
//     `target` is where go/types says the used object is declared ("path:line:col"), which lets
//     the sampler count a symbol's uses before asking the server.
//   - {"names": {qualified: directories}}: how many directories under ROOT (cmd/ and testdata
//     included, parsed without types) declare each qualified name, for "by name" queries that
//     must mean one symbol.
//   - {"interfaceMethods": [names]}: the method names the analysed packages' interfaces declare.
//
// Use kinds: `qualified` (the name in pkg.Name), `property` (x.f, x.m(), a field or method
// of the value's own type), `promoted` (x.m reaching a field or method through an embedded
// field), `embedded` (a type embedded in a struct or interface), `call` (f()), `type` (a
// type name), `identifier` (any other use). Uses of locals, parameters, builtins, labels and
// package names are not listed. Declaration kinds: `function`, `method` (of an exported type,
// not of an interface), `type`, `const` (exported package-level const or var); test files
// declare none.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"
)

type fileOut struct {
	Path    string  `json:"path"`
	Package string  `json:"package"`
	Uses    [][]any `json:"uses"`
	Decls   [][]any `json:"decls"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-scan ROOT")
		os.Exit(2)
	}
	root, err := filepath.Abs(os.Args[1])
	check(err)
	build.Default.CgoEnabled = false
	build.Default.GOOS = "linux"
	build.Default.GOARCH = "amd64"
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)

	dirs := packageDirs(root)
	var scope []string
	type pkgFiles struct {
		dir                string
		files, xtest       []string
		name, xname, ipath string
	}
	var pkgs []pkgFiles
	for _, dir := range dirs {
		bp, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			fmt.Fprintf(os.Stderr, "go-scan: %s: %v\n", rel(root, dir), err)
			if bp == nil {
				continue
			}
		}
		p := pkgFiles{dir: dir, name: bp.Name, ipath: filepath.ToSlash(rel(root, dir))}
		p.files = append(append(p.files, bp.GoFiles...), bp.TestGoFiles...)
		p.xtest = bp.XTestGoFiles
		for _, f := range append(append([]string{}, p.files...), p.xtest...) {
			scope = append(scope, filepath.ToSlash(rel(root, filepath.Join(dir, f))))
		}
		pkgs = append(pkgs, p)
	}
	sort.Strings(scope)
	check(enc.Encode(map[string]any{"scope": scope}))

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	pos := newPositions(fset, root)
	for _, p := range pkgs {
		self := scanPackage(enc, pos, importerAt{imp: imp, dir: filepath.Join(build.Default.GOROOT, "src", p.ipath)}, p.ipath, p.dir, p.files)
		if len(p.xtest) > 0 {
			scanPackage(enc, pos, importerAt{imp: imp, dir: filepath.Join(build.Default.GOROOT, "src", p.ipath), self: self}, p.ipath+"_test", p.dir, p.xtest)
		}
	}
	check(enc.Encode(map[string]any{"names": qualifiedNames(root)}))
	check(enc.Encode(map[string]any{"interfaceMethods": interfaceMethods()}))
}

// interfaceMethods: the names of the methods that the interfaces of the analysed packages
// declare. gopls counts, among the references of a concrete method, the uses of the interface
// methods it implements, found among the packages it has type-checked so far: that part of
// its answer changes from run to run, so such methods are not reference candidates.
func interfaceMethods() []string {
	names := map[string]bool{}
	for _, f := range scannedFiles {
		ast.Inspect(f, func(n ast.Node) bool {
			if it, ok := n.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					for _, id := range m.Names {
						names[id.Name] = true
					}
				}
			}
			return true
		})
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// scannedFiles: every file of the analysed packages, as parsed.
var scannedFiles []*ast.File

// packageDirs: the directories of the std module, sorted.
func packageDirs(root string) []string {
	var dirs []string
	check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		n := d.Name()
		if p != root && (n == "testdata" || strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".") || p == filepath.Join(root, "cmd")) {
			return filepath.SkipDir
		}
		dirs = append(dirs, p)
		return nil
	}))
	sort.Strings(dirs)
	return dirs
}

// importerAt imports from one package's directory, named under GOROOT as go/build expects for
// its vendor lookup (ROOT may be the same tree through a symbolic link, as Debian installs it).
// An external test imports its package as checked with the in-package tests, whose
// export_test.go files it relies on.
type importerAt struct {
	imp  types.ImporterFrom
	dir  string
	self *types.Package
}

func (i importerAt) Import(path string) (*types.Package, error) {
	if i.self != nil && path == i.self.Path() {
		return i.self, nil
	}
	return i.imp.ImportFrom(path, i.dir, 0)
}

// positions turns token positions into root-relative paths and UTF-16 columns. Files imported
// by the source importer are named under GOROOT, which may be ROOT through a symbolic link.
type positions struct {
	fset  *token.FileSet
	roots []string
	lines map[string][]string
}

func newPositions(fset *token.FileSet, root string) *positions {
	roots := []string{root}
	goroot := filepath.Join(build.Default.GOROOT, "src")
	realGoroot, err1 := filepath.EvalSymlinks(goroot)
	realRoot, err2 := filepath.EvalSymlinks(root)
	if err1 == nil && err2 == nil && realGoroot == realRoot && goroot != root {
		roots = append(roots, goroot)
	}
	return &positions{fset: fset, roots: roots, lines: map[string][]string{}}
}

// at: root-relative path, line and UTF-16 column of pos; ok is false outside the root.
func (p *positions) at(pos token.Pos) (path string, line, col int, ok bool) {
	tp := p.fset.Position(pos)
	if !tp.IsValid() {
		return "", 0, 0, false
	}
	for _, r := range p.roots {
		if rp, err := filepath.Rel(r, tp.Filename); err == nil && !strings.HasPrefix(rp, "..") {
			path = filepath.ToSlash(rp)
			ok = true
			break
		}
	}
	if !ok {
		return "", 0, 0, false
	}
	lines, seen := p.lines[tp.Filename]
	if !seen {
		lines = strings.Split(string(must(os.ReadFile(tp.Filename))), "\n")
		p.lines[tp.Filename] = lines
	}
	return path, tp.Line, len(utf16.Encode([]rune(lines[tp.Line-1][:tp.Column-1]))) + 1, true
}

func scanPackage(enc *json.Encoder, pos *positions, imp importerAt, ipath, dir string, names []string) *types.Package {
	fset := pos.fset
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-scan: %v\n", err)
			continue
		}
		files = append(files, f)
	}
	scannedFiles = append(scannedFiles, files...)
	if len(files) == 0 {
		return nil
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	errs, first := 0, error(nil)
	conf := types.Config{Importer: imp, FakeImportC: true, Error: func(err error) {
		if errs++; first == nil {
			first = err
		}
	}}
	pkg, _ := conf.Check(ipath, fset, files, info)
	if errs > 0 {
		fmt.Fprintf(os.Stderr, "go-scan: %s: %d type errors (what they leave unresolved is not listed); the first: %v\n", ipath, errs, first)
	}
	for _, f := range files {
		path, _, _, _ := pos.at(f.Pos())
		fo := fileOut{Path: path, Package: f.Name.Name, Uses: [][]any{}, Decls: [][]any{}}
		embedded := embeddedIdents(f)
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if id, ok := n.(*ast.Ident); ok {
				var parent ast.Node
				if len(stack) > 0 {
					parent = stack[len(stack)-1]
				}
				if kind := useKind(id, parent, info, embedded); kind != "" {
					_, line, col, _ := pos.at(id.Pos())
					target := ""
					if tp, tl, tc, ok := pos.at(info.Uses[id].Pos()); ok {
						target = fmt.Sprintf("%s:%d:%d", tp, tl, tc)
					}
					fo.Uses = append(fo.Uses, []any{line, col, id.Name, kind, target})
				}
			}
			stack = append(stack, n)
			return true
		})
		if !strings.HasSuffix(path, "_test.go") {
			for _, d := range declarations(f) {
				_, line, col, _ := pos.at(d.id.Pos())
				fo.Decls = append(fo.Decls, []any{line, col, d.id.Name, d.kind, d.qualified})
			}
		}
		check(enc.Encode(fo))
	}
	return pkg
}

// useKind classifies a use of a package-level name, a field or a method; "" for anything else.
func useKind(id *ast.Ident, parent ast.Node, info *types.Info, embedded map[*ast.Ident]bool) string {
	obj := info.Uses[id]
	if obj == nil || obj.Pkg() == nil {
		return "" // unresolved, or a builtin
	}
	switch obj.(type) {
	case *types.PkgName, *types.Label, *types.Nil, *types.Builtin:
		return ""
	}
	if embedded[id] {
		return "embedded"
	}
	if sel, ok := parent.(*ast.SelectorExpr); ok && sel.Sel == id {
		if x, ok := sel.X.(*ast.Ident); ok {
			if _, isPkg := info.Uses[x].(*types.PkgName); isPkg {
				return "qualified"
			}
		}
		if s := info.Selections[sel]; s != nil && len(s.Index()) > 1 {
			return "promoted"
		}
		return "property"
	}
	// A field name in a composite literal (`Server{Addr: a}`) is a use of the field.
	if v, ok := obj.(*types.Var); ok && v.IsField() {
		return "property"
	}
	// Locals, parameters, results and function-local types: scope lookups, not asked about.
	if obj.Parent() != obj.Pkg().Scope() {
		return ""
	}
	if call, ok := parent.(*ast.CallExpr); ok && call.Fun == id {
		if _, isType := obj.(*types.TypeName); !isType {
			return "call"
		}
	}
	if _, isType := obj.(*types.TypeName); isType {
		return "type"
	}
	return "identifier"
}

// embeddedIdents: the type names of embedded fields (`struct{ *Reader }`, `interface{ io.Reader }`).
func embeddedIdents(f *ast.File) map[*ast.Ident]bool {
	out := map[*ast.Ident]bool{}
	mark := func(fields *ast.FieldList) {
		if fields == nil {
			return
		}
		for _, fl := range fields.List {
			if len(fl.Names) > 0 {
				continue
			}
			t := fl.Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if ix, ok := t.(*ast.IndexExpr); ok {
				t = ix.X
			}
			switch e := t.(type) {
			case *ast.Ident:
				out[e] = true
			case *ast.SelectorExpr:
				out[e.Sel] = true
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch t := n.(type) {
		case *ast.StructType:
			mark(t.Fields)
		case *ast.InterfaceType:
			mark(t.Methods)
		}
		return true
	})
	return out
}

type decl struct {
	id        *ast.Ident
	kind      string
	qualified string
}

// declarations: exported package-level functions, types, consts and vars, and the exported
// methods of exported non-interface types, with their qualified names.
func declarations(f *ast.File) []decl {
	pkg := f.Name.Name
	var out []decl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, decl{d.Name, "function", pkg + "." + d.Name.Name})
			} else if t := receiverType(d.Recv); t != "" && ast.IsExported(t) {
				out = append(out, decl{d.Name, "method", pkg + "." + t + "." + d.Name.Name})
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					// Interface methods are left out: gopls counts the uses of their
					// implementations among the packages it has type-checked so far, so its
					// answer changes from run to run (sync.Locker.Unlock: 32, then 143), and
					// it panics on some (io.ReaderAt.ReadAt).
					out = append(out, decl{s.Name, "type", pkg + "." + s.Name.Name})
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, decl{n, "const", pkg + "." + n.Name})
						}
					}
				}
			}
		}
	}
	return out
}

func receiverType(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch e := t.(type) {
	case *ast.IndexExpr:
		t = e.X
	case *ast.IndexListExpr:
		t = e.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// qualifiedNames counts, over every directory under root (cmd/ and testdata/ included, as an
// index of the tree has them), the directories declaring each qualified name.
func qualifiedNames(root string) map[string]int {
	dirsOf := map[string]map[string]bool{}
	fset := token.NewFileSet()
	check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // testdata holds files that do not parse on purpose
		}
		for _, d := range declarations(f) {
			m := dirsOf[d.qualified]
			if m == nil {
				m = map[string]bool{}
				dirsOf[d.qualified] = m
			}
			m[filepath.Dir(p)] = true
		}
		return nil
	}))
	out := make(map[string]int, len(dirsOf))
	for k, v := range dirsOf {
		out[k] = len(v)
	}
	return out
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	check(err)
	return r
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-scan:", err)
		os.Exit(1)
	}
}
