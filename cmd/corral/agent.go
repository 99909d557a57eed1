package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"corral/agent"
	"corral/sandbox"
	"corral/tools"
)

const agentUsage = `Usage: corral -p PROMPT [flags]

Runs one task in the workspace and prints the answer: the model's text
streams to stdout, one line per tool call goes to stderr. Every event is
also appended to a session file, so that an interrupted or killed task can
be picked up again with --continue or --resume.

Credentials (a key is only ever sent to its own provider):
  ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, and ANTHROPIC_BASE_URL
  OPENAI_API_KEY and OPENAI_BASE_URL (including /v1) for any
  OpenAI-compatible endpoint; a local server may need only the base URL
Other environment: CORRAL_MODEL (default model), CORRAL_STATE_DIR (where
sessions are kept).

Exit status: 0 when the task finished; 1 when the model API failed, the
turn limit was reached or the model stopped; 130 when interrupted.

Flags:
`

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	if ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return "corral " + v
}

// agentFlags are the flags of print mode.
type agentFlags struct {
	prompt         string
	workspace      string
	provider       string
	model          string
	maxTurns       int
	commandTimeout time.Duration
	autoApprove    bool
	systemPrompt   string
	cont           bool
	resume         string
	output         string
	version        bool
}

func parseAgentFlags(args []string, stdout, stderr io.Writer) (agentFlags, error) {
	var f agentFlags
	fs := flag.NewFlagSet("corral", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.prompt, "p", "", "run the task `PROMPT` and exit (- reads it from stdin)")
	fs.StringVar(&f.workspace, "workspace", ".", "the workspace `DIR`ectory the tools are confined to")
	fs.StringVar(&f.provider, "provider", "", "model API `NAME`: anthropic or openai (default: whichever has credentials set, Anthropic first)")
	fs.StringVar(&f.model, "model", "", "model `ID` (default: $CORRAL_MODEL, else "+agent.DefaultAnthropicModel+" or "+agent.DefaultOpenAIModel+")")
	fs.IntVar(&f.maxTurns, "max-turns", agent.DefaultMaxTurns, "stop after `N` model round-trips")
	fs.DurationVar(&f.commandTimeout, "command-timeout", tools.DefaultCommandTimeout, "bound on each run_bash command")
	fs.BoolVar(&f.autoApprove, "auto-approve", false, "allow edit_file and run_bash without asking")
	fs.StringVar(&f.systemPrompt, "system-prompt", "", "use the text of `FILE` instead of the built-in system prompt (AGENTS.md is still added)")
	fs.BoolVar(&f.cont, "continue", false, "continue the most recent session of this workspace")
	fs.StringVar(&f.resume, "resume", "", "continue the session `ID`")
	fs.StringVar(&f.output, "output", "text", "output `FORMAT`: text, or json for one event per line on stdout")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), agentUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return f, flagError(fs, err, stdout)
	}
	if f.version {
		return f, nil
	}
	switch {
	case len(pos) > 0:
		return f, usageError(stderr, fmt.Sprintf("unexpected argument %q (give the task with -p)", pos[0]))
	case f.prompt == "" && len(args) == 0:
		// Bare `corral`: show how to use it, flags included.
		fs.SetOutput(stderr)
		fs.Usage()
		return f, exitError{2}
	case f.prompt == "":
		return f, usageError(stderr, "no task: run corral -p PROMPT (run corral without arguments for the flags)")
	case f.output != "text" && f.output != "json":
		return f, usageError(stderr, fmt.Sprintf("--output %q: want text or json", f.output))
	case f.cont && f.resume != "":
		return f, usageError(stderr, "--continue and --resume exclude each other")
	case f.maxTurns <= 0:
		return f, usageError(stderr, "--max-turns must be at least 1")
	}
	return f, nil
}

func usageError(stderr io.Writer, msg string) error {
	fmt.Fprintln(stderr, "corral:", msg)
	return exitError{2}
}

func runAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseAgentFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	if f.version {
		fmt.Fprintln(stdout, versionString())
		return nil
	}
	prompt := f.prompt
	if prompt == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("reading the prompt: %w", err)
		}
		prompt = strings.TrimSpace(string(data))
		if prompt == "" {
			return usageError(stderr, "the prompt on stdin is empty")
		}
	}

	base := agent.BasePrompt
	if f.systemPrompt != "" {
		data, err := os.ReadFile(f.systemPrompt)
		if err != nil {
			return fmt.Errorf("--system-prompt: %w", err)
		}
		base = strings.TrimSpace(string(data))
	}

	ws, err := sandbox.OpenWorkspace(f.workspace)
	if err != nil {
		return err
	}
	defer ws.Close()

	// Sessions: pick the one to continue first, since it may say which
	// model the conversation was having.
	dir, dirErr := agent.SessionsDir()
	var (
		sess    *agent.Session
		history []agent.Message
		head    agent.Event
	)
	if f.cont || f.resume != "" {
		if dirErr != nil {
			return dirErr
		}
		path, err := agent.FindSession(dir, ws.Dir(), f.resume)
		if err != nil {
			return err
		}
		var events []agent.Event
		sess, events, err = agent.OpenSession(path)
		if err != nil {
			return err
		}
		head = sess.Head()
		history = agent.Rebuild(events)
		if head.Workspace != "" && head.Workspace != ws.Dir() {
			fmt.Fprintf(stderr, "corral: warning: session %s was recorded in %s; continuing it in %s\n", sess.ID, head.Workspace, ws.Dir())
		}
	}

	provider, err := newProvider(f, os.Getenv, head)
	if err != nil {
		if sess != nil {
			sess.Close()
		}
		return err
	}
	if sess == nil {
		if dirErr == nil {
			sess, err = agent.NewSession(dir, ws.Dir(), provider.Name(), provider.Model())
		} else {
			err = dirErr
		}
		if err != nil {
			// Losing the record is bad; refusing to work for it is worse.
			fmt.Fprintf(stderr, "corral: warning: this run is not recorded: %v\n", err)
			sess = nil
		}
	}

	var out agent.Sink
	if f.output == "json" {
		out = agent.NewJSONWriter(stdout)
	} else {
		out = &agent.Printer{Out: stdout, Err: stderr}
	}
	var sink agent.Sink = out
	if sess != nil {
		defer sess.Close()
		sink = agent.Tee(sess, out)
		// The output names the session, so that it can be resumed by ID.
		out.Event(sess.Head())
	}

	guest := sandbox.NewGuest(ws, sandbox.CacheDir())
	defer guest.Close()
	ex := tools.NewExecutor(tools.Config{
		Workspace:      ws,
		Files:          guest,
		Approver:       agent.ObservedApprover{Inner: agent.DefaultApprover(f.autoApprove, stdin, stderr), Sink: sink},
		CommandTimeout: f.commandTimeout,
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first Ctrl-C the run winds down; a second one is the
		// user insisting, and gets the default: the process ends.
		<-ctx.Done()
		stop()
	}()
	loop := &agent.Loop{
		Provider:    provider,
		Tools:       ex,
		Definitions: tools.Definitions(),
		System:      agent.SystemPrompt(base, ws.Root()),
		MaxTurns:    f.maxTurns,
		Sink:        sink,
	}
	_, runErr := loop.Run(ctx, history, prompt)
	if sess != nil {
		if err := sess.Err(); err != nil {
			fmt.Fprintf(stderr, "corral: warning: %v\n", err)
		}
	}
	if runErr == nil {
		return nil
	}
	code := 1
	var re *agent.RunError
	if errors.As(runErr, &re) && re.Status == agent.StatusInterrupted {
		code = 130
	}
	if f.output == "json" {
		// The printer has shown the error already; JSON output has it as
		// an event, and stderr gets the one line.
		fmt.Fprintln(stderr, "corral:", runErr)
	}
	if sess != nil {
		fmt.Fprintf(stderr, "corral: session %s is saved; continue it with: corral --continue -p PROMPT\n", sess.ID)
	}
	return exitError{code}
}

// newProvider picks the model API from the flags and the environment.
// head is the session being continued, if any: its model is kept unless
// another is asked for.
func newProvider(f agentFlags, getenv func(string) string, head agent.Event) (agent.Provider, error) {
	antKey, antToken := getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_AUTH_TOKEN")
	oaiKey, oaiBase := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	name := f.provider
	if name == "" {
		switch {
		case antKey != "" || antToken != "":
			name = "anthropic"
		case oaiKey != "" || oaiBase != "":
			name = "openai"
		default:
			return nil, errors.New("no model API credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) for Anthropic, or OPENAI_API_KEY and/or OPENAI_BASE_URL (ending in /v1) for an OpenAI-compatible endpoint")
		}
	}
	model := f.model
	if model == "" {
		model = getenv("CORRAL_MODEL")
	}
	if model == "" && head.Provider == name {
		model = head.Model
	}
	switch name {
	case "anthropic":
		if antKey == "" && antToken == "" {
			return nil, errors.New("--provider anthropic: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN")
		}
		return agent.NewAnthropic(agent.AnthropicConfig{APIKey: antKey, AuthToken: antToken, BaseURL: getenv("ANTHROPIC_BASE_URL"), Model: model}), nil
	case "openai":
		if oaiKey == "" && oaiBase == "" {
			return nil, errors.New("--provider openai: set OPENAI_API_KEY, or OPENAI_BASE_URL (ending in /v1) for a local server")
		}
		return agent.NewOpenAI(agent.OpenAIConfig{APIKey: oaiKey, BaseURL: oaiBase, Model: model}), nil
	default:
		return nil, fmt.Errorf("--provider %q: want anthropic or openai", name)
	}
}
