// Package plugin makes the cornus binary a Docker CLI plugin: run as
// `docker-cornus` by the docker CLI (`docker cornus ...`), it answers the
// plugin metadata request, parses the docker CLI's global options, picks
// the daemon the way the docker CLI would (-H, --context, DOCKER_HOST,
// DOCKER_CONTEXT, currentContext in config.json), rewrites compose
// shorthands (`docker cornus up` = `cornus compose up`), listens on the CLI's
// plugin socket for Ctrl-C, and installs itself into cli-plugins.
//
// It is a faithful re-implementation of the protocol of
// github.com/docker/cli/cli-plugins (metadata schema 0.1.0,
// DOCKER_CLI_PLUGIN_SOCKET, the contexts/meta/<sha256>/meta.json store)
// without importing docker/cli.
//
// Entry points:
//   - IsPluginBinary, IsMetadataRequest, WriteMetadata: plugin detection
//     and the `docker-cli-plugin-metadata` answer;
//   - Prepare (ParseArgs, built on ParseGlobals and Rewrite, then Resolve):
//     turn the plugin's argv and environ into cornus's argv and the environ
//     the dockerhost backend reads (DOCKER_HOST, DOCKER_CONFIG,
//     DOCKER_TLS_VERIFY, DOCKER_CERT_PATH);
//   - WatchCLI: cancel on the CLI closing its plugin socket;
//   - Install, Uninstall, DefaultDir: `cornus plugin install|uninstall`.
//
// Everything is environ in, environ out: the package never reads
// os.Environ and never sets process state; it reads only the docker config
// directory (config.json and the context store) and, in Install, writes only
// the plugin directory.
//
// Not supported (documented gaps):
//   - TLS: --tls, --tlsverify, --tlscacert/--tlscert/--tlskey and a context's
//     TLS material are passed on as DOCKER_TLS_VERIFY and DOCKER_CERT_PATH,
//     which can only name a directory holding ca.pem, cert.pem and key.pem;
//     other file layouts are an error. The dockerhost backend does not use
//     TLS yet, so Prepare warns whenever TLS is asked for.
//   - -D/--debug and --log-level only make Prepare report its daemon
//     choice (Result.Debug); cornus has no log levels of its own.
//   - ssh:// hosts and non-docker context endpoints are passed through;
//     the dockerhost backend rejects what its client cannot dial.
//   - The docker-cli-plugin-hooks protocol (cornus declares no hooks).
//
// plugin imports no other cornus package but internal/buildinfo and
// internal/boundedfile (docker's config.json is a file the user names);
// it must never import the CLI, the engine or a backend.
package plugin
