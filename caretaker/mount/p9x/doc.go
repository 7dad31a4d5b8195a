// Package p9x is what cornus adds to a 9P2000.L connection, below the p9
// library both ends use: frames written whole, one write each (the library
// writes a message in two or three parts), and read through a buffer; and
// Tstatdir, the attributes of many names of one directory in one round
// trip, so a listing with attributes costs a round trip per batch instead
// of a walk and a clunk per entry. Both cornus ends speak Tstatdir; any
// other 9P server answers it with Rlerror, after which the client reports
// ErrUnsupported and its caller walks each name as before. Other 9P
// clients (the kernel's v9fs) never send it and see plain 9P2000.L.
package p9x
