// Package p9x is what cornus adds to a 9P2000.L connection, below the p9
// library both ends use: frames written whole, one write each (the library
// writes a message in two or three parts), and read through a buffer; and
// Tlistdir, a directory's entries with their attributes, by path, in one
// round trip per batch, the end of the listing flagged: no walk, open or
// clunk of the directory and no walk per entry, where plain 9P2000.L takes
// four round trips and then one per entry. Both cornus ends speak it; any
// other 9P server answers it with Rlerror, after which the client reports
// ErrUnsupported and its caller lists and walks as 9P2000.L does. Other 9P
// clients (the kernel's v9fs) never send it and see plain 9P2000.L.
package p9x
