package charts

import (
	"embed"
	"io/fs"
)

//go:embed all:cornus
var files embed.FS

// Cornus is the cornus chart's directory (Chart.yaml, values.yaml,
// templates/).
func Cornus() fs.FS {
	sub, err := fs.Sub(files, "cornus")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	return sub
}
