package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestUnsupported(t *testing.T) {
	tests := []struct {
		script string
		want   string // "" when the interpreter runs it
	}{
		{"echo hi", ""},
		{"echo hi > f 2>&1; cat < f; echo x >&2; exec 2>/dev/null", ""},
		{"cat <<EOF\nx\nEOF\ncat <<< word", ""},
		{"printf '%s %5d|%-3s|%03x %%\\n' a 1 b 7", ""},
		{"printf \"$fmt\" a", ""},
		{"declare -a a=(1); declare -A m; local -r x=1; export y=2", ""},
		{"wait; wait $!", ""},
		{"[[ a == a* ]] && case x in x) ;; esac", ""},
		{"echo ${#PIPE}", ""},
		{"coproc cat", "coproc"},
		{"coproc name { cat; }", "coproc"},
		{"exec 3>file", "redirection of file descriptor 3"},
		{"echo x >&3", "redirection >&3"},
		{"read x <&0", "redirection <&0"},
		{"echo x 1>&$fd", "redirection >&$fd"},
		{"cat <> file", "redirection <>"},
		{"echo x >| file", "redirection >|"},
		{"printf -v var %s x", "printf -v"},
		{"printf %q 'a b'", "printf %q"},
		{"printf '%.2f\\n' 3.14159", "printf %.2f"},
		{"printf -- '%X' 255", "printf %X"},
		{"declare -i n=1", "declare -i"},
		{"typeset -l s=ABC", "typeset -l"},
		{"kill %1", "kill"},
		{"builtin ulimit -n", "ulimit"},
		{"jobs; umask 022", "jobs"},
		{"false | true; echo ${PIPESTATUS[0]}", "$PIPESTATUS"},
		{"f() { echo $FUNCNAME; }", "$FUNCNAME"},
		{"shopt -s extglob; ls !(x)", "extended globbing (extglob)"},
		{"sleep 1 & wait -n", "wait -n"},
		{"sleep 1 & wait %1", "wait %1"},
		{"read -r -p prompt -s x; read -ra arr", ""},
		{"read -t 1 x", "read -t"},
		{"read -rn1 x", "read -n"},
		{"cd -P /tmp", "cd -P"},
		{"cd -; cd -- d; pushd -1", ""},
		{"trap 'rm -f x' EXIT; trap - ERR; trap -p", ""},
		{"trap 'echo bye' INT TERM", "trap on INT"},
		{"shopt -s nullglob dotglob; shopt -u failglob", ""},
		{"shopt -s failglob", "shopt -s failglob"},
		{"set -euo pipefail; set +x; set -- a b; set -e -x", ""},
		{"set -o posix", "set -o posix"},
		{"set -C", "set -C"},
		{"mkdir d && cd $_", "$_"},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(tc.script), "")
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got := unsupported(f); got != tc.want {
				t.Errorf("unsupported = %q, want %q", got, tc.want)
			}
		})
	}
}

// Whatever the input, detection and the clamp never panic.
func FuzzUnsupported(f *testing.F) {
	for _, s := range []string{"echo hi", "coproc cat", "printf '%", "exec 3>&-", "declare -"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Clamp(s, 100)
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
		if err == nil {
			unsupported(file)
		}
	})
}
