module github.com/hugelgupf/p9

go 1.20

require (
	github.com/u-root/uio v0.0.0-20230305220412-3e8cd9d6bf63
	golang.org/x/sys v0.11.0
)
