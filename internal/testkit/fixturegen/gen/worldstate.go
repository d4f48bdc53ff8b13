package gen

import "github.com/rollout-dev/rollout/rollout"

// world_state lines: a full snapshot after each compaction, patches between.

// afterItem is called right after a model-visible response_item line: it
// writes the pending full snapshot, or with probability p a patch.
func (g *generator) afterItem(p float64) {
	switch {
	case g.needFull:
		g.needFull = false
		g.haveBaseline = true
		g.worldState(true)
	case g.haveBaseline && p > 0 && g.r.Float64() < p:
		g.worldState(false)
	}
}

var openFiles = []string{
	"internal/reader/reader.go", "internal/engine/engine.go", "checks/rule.go",
	"cmd/rollout/main.go", "README.md", "docs/performance.md", "Makefile",
}

func (g *generator) worldState(full bool) {
	g.tick(1, 3)
	g.st.WorldStates++
	g.begin("world_state")
	l := append(g.line, `{"full":`...)
	l = appendBool(l, full)
	l = append(l, `,"state":`...)
	if full {
		g.st.Snapshots++
		ws := &g.ws
		l = append(l, `{"environment":{"cwd":`...)
		l = rollout.AppendJSONString(l, cwds[ws.cwd])
		l = append(l, `,"shell":"zsh","os":"linux"},"permissions":{"sandbox":"`...)
		l = append(l, ws.sandbox...)
		l = append(l, `","network_access":`...)
		l = appendBool(l, ws.network)
		l = append(l, `},"git":{"branch":"`...)
		l = append(l, ws.branch...)
		l = append(l, `","head":"`...)
		l = append(l, ws.head...)
		l = append(l, `"},"open_files":`...)
		l = g.appendFiles(l)
		if ws.scratch {
			l = append(l, `,"scratch":{"note":"plan: read, patch, test"}`...)
		}
		l = append(l, '}')
	} else {
		l = g.appendPatch(l)
	}
	g.line = append(l, '}')
	g.end()
}

func (g *generator) appendFiles(l []byte) []byte {
	l = append(l, '[')
	for i, f := range g.ws.files {
		if i > 0 {
			l = append(l, ',')
		}
		l = rollout.AppendJSONString(l, openFiles[f])
	}
	return append(l, ']')
}

// appendPatch appends a non-empty merge patch that changes the baseline,
// and applies it to g.ws.
func (g *generator) appendPatch(l []byte) []byte {
	ws := &g.ws
	kinds := g.r.Perm(5)[:1+g.r.IntN(2)]
	l = append(l, '{')
	for i, k := range kinds {
		if i > 0 {
			l = append(l, ',')
		}
		switch k {
		case 0:
			ws.cwd = (ws.cwd + 1 + g.r.IntN(len(cwds)-1)) % len(cwds)
			l = append(l, `"environment":{"cwd":`...)
			l = rollout.AppendJSONString(l, cwds[ws.cwd])
			l = append(l, '}')
		case 1:
			ws.network = !ws.network
			l = append(l, `"permissions":{"network_access":`...)
			l = appendBool(l, ws.network)
			l = append(l, '}')
		case 2:
			old := ws.head
			for ws.head == old {
				ws.head = g.hex(40)
			}
			l = append(l, `"git":{"head":"`...)
			l = append(l, ws.head...)
			l = append(l, `"}`...)
		case 3:
			ws.scratch = !ws.scratch
			if ws.scratch {
				l = append(l, `"scratch":{"note":"plan: read, patch, test"}`...)
			} else {
				l = append(l, `"scratch":null`...)
			}
		case 4:
			// Arrays are replaced whole; appending one file always changes it.
			if len(ws.files) >= 4 {
				ws.files = append(ws.files[:0], ws.files[len(ws.files)-1])
			}
			ws.files = append(ws.files, g.r.IntN(len(openFiles)))
			l = append(l, `"open_files":`...)
			l = g.appendFiles(l)
		}
	}
	return append(l, '}')
}
