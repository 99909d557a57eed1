package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"corral/sandbox"
)

// MaxChars bounds what one tool result may put in the model's context.
const MaxChars = 20000

func init() {
	register(tool{
		def: Definition{
			Name:        "read_file",
			Description: "Read the contents of a text file at the given path, relative to the workspace root. Use this before editing a file so the old_str you supply to edit_file matches exactly.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The file to read, relative to the workspace root."},` +
				`"offset":{"type":"integer","minimum":1,"description":"The 1-based line to start reading at."},` +
				`"limit":{"type":"integer","minimum":1,"description":"The number of lines to read."}},` +
				`"required":["path"]}`),
		},
		run: (*Executor).readFile,
	})
	register(tool{
		def: Definition{
			Name:        "list_files",
			Description: "List files and directories at the given path (defaults to the workspace root). Directory names end with a trailing slash.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The directory to list, relative to the workspace root."}}}`),
		},
		run: (*Executor).listFiles,
	})
	register(tool{
		def: Definition{
			Name:        "edit_file",
			Description: "Replace an exact substring in a file. old_str must appear EXACTLY ONCE in the file and must differ from new_str. If the file does not exist and old_str is empty, the file is created with new_str as its contents.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The file to edit or create, relative to the workspace root."},` +
				`"old_str":{"type":"string","description":"The exact text to replace; empty to create a new file."},` +
				`"new_str":{"type":"string","description":"The text to put in its place."}},` +
				`"required":["path","old_str","new_str"]}`),
		},
		run: (*Executor).editFile,
	})
}

// resolve applies the workspace's one path check.
func (e *Executor) resolve(path string) (string, *Result) {
	rel, err := e.cfg.Workspace.Resolve(path)
	if err != nil {
		r := errResult("%s", err.Error())
		return "", &r
	}
	return rel, nil
}

func refused(path string) Result {
	return errResult("%s", (&sandbox.RefusedError{Path: path}).Error())
}

func (e *Executor) readFile(ctx context.Context, args map[string]json.RawMessage) Result {
	path, _, aerr := stringArg(args, "read_file", "path", true)
	if aerr != nil {
		return aerr.res
	}
	offset, aerr := intArg(args, "read_file", "offset")
	if aerr != nil {
		return aerr.res
	}
	limit, aerr := intArg(args, "read_file", "limit")
	if aerr != nil {
		return aerr.res
	}
	rel, res := e.resolve(path)
	if res != nil {
		return *res
	}
	if offset == 0 {
		offset = 1
	}
	show := sandbox.Display(rel)
	r, err := e.cfg.Files.ReadFile(ctx, rel, offset, limit, MaxChars)
	if err != nil {
		switch sandbox.KindOf(err) {
		case sandbox.KindNotExist, sandbox.KindIsDir, sandbox.KindNotDir:
			return errResult("No such file: %s", show)
		case sandbox.KindBinary:
			return errResult("read_file: %s is a binary file; read_file shows text only.", show)
		}
		return fileError("read_file", path, show, err)
	}
	e.reads.put(rel, r.Stamp)
	if r.Last < r.First && r.Lines < offset && offset > 1 {
		return errResult("read_file: offset %d is past the end of %s (%d lines).", offset, show, r.Lines)
	}
	text := r.Text
	if text == "" && r.Size == 0 {
		return okResult("(empty file)")
	}
	switch {
	case r.Cut:
		text = withMarker(text, fmt.Sprintf("[truncated: line %d of %s is longer than %d characters and was cut; use run_bash to see the rest of it]", r.Last, show, MaxChars))
	case r.More:
		text = withMarker(text, fmt.Sprintf("[truncated: showing lines %d-%d of %s, a file of %d bytes; pass offset=%d to read on]", r.First, r.Last, show, r.Size, r.Last+1))
	}
	return Result{Text: text}
}

func withMarker(text, marker string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + marker
}

// fileError words the failures all file tools share.
func fileError(tool, path, show string, err error) Result {
	switch sandbox.KindOf(err) {
	case sandbox.KindEscapes:
		return refused(path)
	case sandbox.KindSpecial:
		return errResult("%s: %s is not a regular file.", tool, show)
	case sandbox.KindPermission:
		return errResult("%s: permission denied: %s", tool, show)
	case sandbox.KindNotDir:
		return errResult("%s: a parent of %s is not a directory.", tool, show)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return errResult("%s: interrupted by the user.", tool)
	case errors.Is(err, context.DeadlineExceeded):
		return errResult("%s: timed out.", tool)
	}
	return errResult("%s: %s: %v", tool, show, err)
}

func (e *Executor) listFiles(ctx context.Context, args map[string]json.RawMessage) Result {
	path, given, aerr := stringArg(args, "list_files", "path", false)
	if aerr != nil {
		return aerr.res
	}
	if !given || path == "" {
		path = "."
	}
	rel, res := e.resolve(path)
	if res != nil {
		return *res
	}
	show := sandbox.Display(rel)
	entries, err := e.cfg.Files.ListDir(ctx, rel)
	if err != nil {
		switch sandbox.KindOf(err) {
		case sandbox.KindNotExist, sandbox.KindNotDir:
			return errResult("No such directory: %s", show)
		}
		return fileError("list_files", path, show, err)
	}
	if len(entries) == 0 {
		return okResult("(empty directory)")
	}
	var b strings.Builder
	shown, chars := 0, 0
	for _, dirs := range []bool{true, false} {
		for _, en := range entries {
			if en.Dir != dirs {
				continue
			}
			line := en.Name
			if en.Dir {
				line += "/"
			}
			n := utf8.RuneCountInString(line) + 1
			if chars+n > MaxChars {
				return Result{Text: withMarker(b.String(), fmt.Sprintf(
					"[truncated: showing %d of %d entries in %s; list a subdirectory, or use run_bash to filter]", shown, len(entries), show))}
			}
			b.WriteString(line)
			b.WriteByte('\n')
			chars += n
			shown++
		}
	}
	return Result{Text: b.String()}
}

func (e *Executor) editFile(ctx context.Context, args map[string]json.RawMessage) Result {
	path, _, aerr := stringArg(args, "edit_file", "path", true)
	if aerr != nil {
		return aerr.res
	}
	old, _, aerr := stringArg(args, "edit_file", "old_str", true)
	if aerr != nil {
		return aerr.res
	}
	repl, _, aerr := stringArg(args, "edit_file", "new_str", true)
	if aerr != nil {
		return aerr.res
	}
	if old == repl {
		return errResult("edit_file: old_str and new_str are identical — nothing to do.")
	}
	rel, res := e.resolve(path)
	if res != nil {
		return *res
	}
	show := sandbox.Display(rel)
	req := sandbox.EditRequest{Rel: rel, Old: old, New: repl, DryRun: true}
	if s, ok := e.reads.get(rel); ok {
		req.Expect = &s
	}
	check, err := e.cfg.Files.Edit(ctx, req)
	if err == nil && check.Count != 1 {
		if check.Count == 0 {
			return errResult("edit_file: old_str not found in %s.", show)
		}
		return errResult("edit_file: old_str appears %d times in %s — include more surrounding context so it is unique.", check.Count, show)
	}
	if err != nil {
		return editError(path, show, err)
	}

	action := Action{Tool: "edit_file"}
	if check.Created {
		action.Description = fmt.Sprintf("create %s (%d chars)", show, utf8.RuneCountInString(repl))
	} else {
		action.Description = fmt.Sprintf("edit %s (replace %d chars with %d)", show, utf8.RuneCountInString(old), utf8.RuneCountInString(repl))
	}
	action.Description = visible(action.Description)
	if err := e.cfg.Approver.Approve(ctx, action); err != nil {
		return errResult("%s", err.Error())
	}

	// The file must still be what was checked, whatever happened while the
	// user was deciding.
	req.DryRun = false
	req.Expect = nil
	if !check.Created {
		req.Expect = &check.Stamp
	}
	done, err := e.cfg.Files.Edit(ctx, req)
	if err == nil && done.Count != 1 {
		err = &sandbox.FileError{Kind: sandbox.KindChanged}
	}
	if err != nil {
		return editError(path, show, err)
	}
	e.reads.put(rel, done.Stamp)
	if done.Created {
		return okResult("Created %s.", show)
	}
	return okResult("Edited %s.", show)
}

func editError(path, show string, err error) Result {
	switch sandbox.KindOf(err) {
	case sandbox.KindNotExist:
		return errResult("No such file: %s (pass an empty old_str to create it).", show)
	case sandbox.KindChanged:
		return errResult("edit_file: %s changed on disk since you last read it — read it again, then edit.", show)
	case sandbox.KindExists:
		return errResult("edit_file: %s already exists and is not empty — old_str must not be empty when editing it.", show)
	case sandbox.KindIsDir:
		return errResult("edit_file: %s is a directory.", show)
	case sandbox.KindTooLarge:
		return errResult("edit_file: %s is too large to edit (over 32 MiB).", show)
	}
	return fileError("edit_file", path, show, err)
}
