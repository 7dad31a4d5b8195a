// Package fromenv opens the backend CORNUS_DEPLOY_BACKEND names (the
// environment is the only selector, so every front end agrees). It is the
// one package that imports every backend.
package fromenv
