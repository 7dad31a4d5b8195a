package monitor

// sunPathMax is the size of Linux's sockaddr_un.sun_path, NUL included:
// a socket path must be shorter.
const sunPathMax = 108
