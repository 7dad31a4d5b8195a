package builder

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/cornus-dev/cornus/internal/tarfs"
)

// ExtractContext writes a build context sent as a tar (plain or gzip, as
// docker build sends it) into dir: directories, regular files, symlinks
// and hard links, all through an os.Root of dir (tarfs.Extract), so no
// entry (and no link an earlier entry planted) reaches outside it.
// Devices, FIFOs and streams past maxTarContext bytes are refused.
func ExtractContext(r io.Reader, dir string) error {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("build context: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	if err := tarfs.Extract(in, dir, tarfs.Options{Limit: maxTarContext, What: "context"}); err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	return nil
}
