package monitor

import (
	"math/rand/v2"
	"strings"
)

// A canary's prompt reads like a chat prompt and has the length of one: a
// size is drawn from promptSizes (a discrete, roughly log-normal table of
// chat prompt sizes, median about 300 bytes), then natural sentences fill
// it. Prompts are ASCII without quotes or backslashes, so the JSON body is
// the prompt plus the id, the model and 40 bytes: well under the 64 KiB an
// executor accepts.
const (
	minPromptBytes = 40
	maxPromptBytes = 4000
)

// promptSizes: a size is drawn in [lo, hi) of a bucket chosen by weight
// (percent).
var promptSizes = []struct{ lo, hi, weight int }{
	{40, 80, 9},
	{80, 160, 17},
	{160, 320, 23},
	{320, 640, 22},
	{640, 1280, 16},
	{1280, 2560, 9},
	{2560, maxPromptBytes + 1, 4},
}

// promptSize draws a prompt size from promptSizes.
func promptSize() int {
	n := rand.IntN(100)
	for _, b := range promptSizes {
		if n < b.weight {
			return b.lo + rand.IntN(b.hi-b.lo)
		}
		n -= b.weight
	}
	return minPromptBytes
}

var (
	promptOpeners = []string{
		"Can you explain", "Please summarize what you know about", "Write a short paragraph about",
		"What are the main things to know about", "Help me understand", "Give me three ideas related to",
		"Explain in plain English", "Draft a polite email about", "How would you approach",
		"List the pros and cons of", "I need a quick overview of", "What is the best way to learn about",
	}
	promptTopics = []string{
		"how vaccines train the immune system", "the causes of the French Revolution", "storing renewable energy",
		"a weekend trip to Lisbon", "learning the guitar as an adult", "the rules of chess", "sorting algorithms in Python",
		"saving for retirement", "composting at home", "the history of the printing press", "training for a first marathon",
		"writing a cover letter", "how interest rates affect house prices", "caring for indoor plants",
		"the water cycle", "setting up a small home network", "baking sourdough bread", "time zones and daylight saving",
		"negotiating a salary", "the basics of machine learning", "reducing food waste", "planning a birthday party",
	}
	promptEnds      = []string{"?", ".", "? Thanks.", ", please.", "? Keep it short."}
	promptSentences = []string{
		"I am a beginner, so please keep it simple.", "Use short sentences and avoid jargon.",
		"My manager asked me to prepare this for a meeting tomorrow.", "Here is some background that might help.",
		"Include an example if you can.", "I have read a few articles but they contradict each other.",
		"The audience is a group of high school students.", "Please format the answer as a list.",
		"I tried this last year and it did not go well.", "Assume I have about an hour a day for it.",
		"The committee met on Tuesday to review the results of the last quarter.",
		"Most of the team agreed that the schedule was too tight.", "We have a limited budget and two people.",
		"The report mentions several risks but does not rank them.", "I would like to understand the trade-offs.",
		"Some of my friends recommended starting with the basics first.", "What mistakes do people usually make?",
		"The deadline is at the end of the month.", "Please point out anything I may have missed.",
		"The original text is below, copied from my notes.", "It should be friendly but professional.",
		"We used a spreadsheet until now, which became hard to maintain.", "Can you also suggest a title?",
	}
)

func pick(words []string) string { return words[rand.IntN(len(words))] }

// canaryPrompt is a natural-looking prompt of a drawn size, in
// [minPromptBytes, maxPromptBytes].
func canaryPrompt() string {
	size := promptSize()
	var b strings.Builder
	b.Grow(size + 128)
	b.WriteString(pick(promptOpeners) + " " + pick(promptTopics) + pick(promptEnds))
	for b.Len() < size {
		b.WriteString(" " + pick(promptSentences))
	}
	out := b.String()[:size]
	// End on a word if that keeps the prompt long enough.
	if i := strings.LastIndexByte(out, ' '); i >= minPromptBytes && size < b.Len() {
		out = out[:i]
	}
	return out
}
