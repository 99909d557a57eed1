// Package agent runs the conversation between a model and the tools: the
// loop, the model providers, the approval gate, events and sessions.
package agent
