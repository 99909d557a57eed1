package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The interpreter parses all of bash but cannot run all of it, and it finds
// out half-way through: a script that has already changed files then stops
// with "unhandled command node". unsupported walks the syntax tree before
// anything runs so that such a script goes whole to the system shell. The
// lists below were checked against mvdan.cc/sh/v3 v3.14.1, case by case.

// missingBuiltins are names the interpreter treats as builtins but does not
// implement ("unsupported builtin"), so they would not fall through to a
// program on PATH either.
var missingBuiltins = map[string]bool{
	"bg": true, "fc": true, "fg": true, "jobs": true, "kill": true, "newgrp": true,
	"umask": true, "bind": true, "caller": true, "compgen": true, "complete": true,
	"compopt": true, "disown": true, "enable": true, "history": true, "logout": true,
	"suspend": true, "ulimit": true,
}

// missingVars are bash variables the interpreter leaves empty.
var missingVars = map[string]bool{
	"PIPESTATUS": true, "FUNCNAME": true, "SECONDS": true, "BASH_SOURCE": true,
	"BASH_LINENO": true, "BASHPID": true, "EPOCHSECONDS": true, "EPOCHREALTIME": true,
	"_": true, // `mkdir d && cd $_` would get the wrong word
}

// bashOpts are the shopt options the interpreter can turn on.
var bashOpts = map[string]bool{
	"dotglob": true, "expand_aliases": true, "extglob": true, "globstar": true,
	"nocaseglob": true, "nullglob": true,
}

// setOpts are the set -o options, and setFlags their letters, that the
// interpreter knows.
var setOpts = map[string]bool{
	"allexport": true, "errexit": true, "noexec": true, "noglob": true,
	"nounset": true, "xtrace": true, "pipefail": true,
}

const setFlags = "aenfux"

// declareFlags are the declare/typeset/local options the interpreter knows.
var declareFlags = "xraAngfp"

// printfVerbs are the conversions of the interpreter's printf; flags and
// widths are handled, precision ("%.2f") is not.
const printfVerbs = "%csbdiuox"
const printfFlags = "+- 0123456789"

// unsupported returns why the interpreter cannot run f, or "" if it can.
func unsupported(f *syntax.File) string {
	var why string
	syntax.Walk(f, func(node syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := node.(type) {
		case *syntax.CoprocClause:
			why = "coproc"
		case *syntax.Stmt:
			if n.Coprocess {
				why = "coproc"
			}
		case *syntax.Redirect:
			why = redirectProblem(n)
		case *syntax.ExtGlob:
			why = "extended globbing (extglob)"
		case *syntax.ParamExp:
			if n.Param != nil && missingVars[n.Param.Value] {
				why = "$" + n.Param.Value
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				// Options parse as naked words: no name, the value "-i".
				opt := ""
				switch {
				case a.Name == nil && a.Value != nil:
					opt = a.Value.Lit()
				case a.Naked && a.Name != nil:
					opt = a.Name.Value
				}
				if !strings.HasPrefix(opt, "-") {
					continue
				}
				for _, c := range opt[1:] {
					if !strings.ContainsRune(declareFlags, c) {
						why = fmt.Sprintf("%s -%c", n.Variant.Value, c)
						break
					}
				}
				if why != "" {
					break
				}
			}
		case *syntax.CallExpr:
			why = callProblem(n)
		}
		return why == ""
	})
	return why
}

func redirectProblem(r *syntax.Redirect) string {
	if r.N != nil {
		switch r.N.Value {
		case "0", "1", "2":
		default:
			return "redirection of file descriptor " + r.N.Value
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc,
		syntax.WordHdoc, syntax.RdrAll, syntax.AppAll:
		return ""
	case syntax.DplOut:
		switch r.Word.Lit() {
		case "1", "2", "-":
			return ""
		}
		return "redirection " + r.Op.String() + printWord(r.Word)
	case syntax.DplIn:
		if r.Word.Lit() == "-" {
			return ""
		}
		return "redirection " + r.Op.String() + printWord(r.Word)
	}
	return "redirection " + r.Op.String()
}

func printWord(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return ""
	}
	return b.String()
}

func callProblem(c *syntax.CallExpr) string {
	if len(c.Args) == 0 {
		return ""
	}
	name := c.Args[0].Lit()
	// "builtin kill" and "command kill" reach the same builtins.
	args := c.Args[1:]
	for (name == "builtin" || name == "command") && len(args) > 0 {
		name, args = args[0].Lit(), args[1:]
	}
	if missingBuiltins[name] {
		return name
	}
	switch name {
	case "printf":
		if len(args) == 0 {
			return ""
		}
		if args[0].Lit() == "-v" {
			return "printf -v"
		}
		if args[0].Lit() == "--" && len(args) > 1 {
			args = args[1:]
		}
		if format, ok := literalString(args[0]); ok {
			if v := badPrintfVerb(format); v != "" {
				return "printf " + v
			}
		}
	case "wait":
		for _, a := range args {
			if s := a.Lit(); strings.HasPrefix(s, "-") || strings.HasPrefix(s, "%") {
				return "wait " + s
			}
		}
	case "read":
		return flagProblem("read", args, "rsap", "p")
	case "cd", "pushd":
		if len(args) > 0 {
			if s := args[0].Lit(); len(s) > 1 && s[0] == '-' && s != "--" && !isDigits(s[1:]) {
				return name + " " + s
			}
		}
	case "trap":
		return trapProblem(args)
	case "shopt":
		on := false
		for _, a := range args {
			s := a.Lit()
			switch {
			case s == "-s":
				on = true
			case strings.HasPrefix(s, "-"):
			case on && s != "" && !bashOpts[s]:
				return "shopt -s " + s
			}
		}
	case "set":
		return setProblem(args)
	}
	return ""
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// flagProblem checks the leading options of a builtin against the letters
// it knows; letters in withValue take the next word as their value.
func flagProblem(name string, args []*syntax.Word, known, withValue string) string {
	for i := 0; i < len(args); i++ {
		s := args[i].Lit()
		if s == "--" || len(s) < 2 || s[0] != '-' {
			return ""
		}
		for _, c := range s[1:] {
			if !strings.ContainsRune(known, c) {
				return fmt.Sprintf("%s -%c", name, c)
			}
			if strings.ContainsRune(withValue, c) {
				i++
				break
			}
		}
	}
	return ""
}

// trapProblem: the interpreter traps only EXIT and ERR.
func trapProblem(args []*syntax.Word) string {
	if len(args) < 2 {
		return ""
	}
	if s := args[0].Lit(); s == "-l" || s == "-p" {
		return ""
	}
	for _, a := range args[1:] {
		sig, ok := literalString(a)
		if !ok {
			continue
		}
		switch strings.ToUpper(sig) {
		case "EXIT", "ERR", "0":
		default:
			return "trap on " + sig
		}
	}
	return ""
}

func setProblem(args []*syntax.Word) string {
	for i := 0; i < len(args); i++ {
		s := args[i].Lit()
		if s == "--" || s == "-" || len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			return ""
		}
		for _, c := range s[1:] {
			if c == 'o' {
				if i+1 < len(args) {
					i++
					if o := args[i].Lit(); o != "" && !setOpts[o] {
						return "set -o " + o
					}
				}
				continue
			}
			if !strings.ContainsRune(setFlags, c) {
				return fmt.Sprintf("set %c%c", s[0], c)
			}
		}
	}
	return ""
}

// literalString returns the value of a word made only of literal and quoted
// parts, as printf's format usually is.
func literalString(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// badPrintfVerb returns the first conversion in format that the
// interpreter's printf rejects, such as "%.2f" or "%q".
func badPrintfVerb(format string) string {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte(printfFlags, format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			return format[i:]
		}
		if strings.IndexByte(printfVerbs, format[j]) < 0 {
			// Name the whole conversion, as in "%.2f".
			k := j
			for k < len(format) && strings.IndexByte(".*0123456789", format[k]) >= 0 {
				k++
			}
			return format[i:min(k+1, len(format))]
		}
		i = j
	}
	return ""
}
