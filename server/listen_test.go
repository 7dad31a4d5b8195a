package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Plain HTTP is refused off loopback unless asked for; with a
// certificate the API is served over TLS.
func TestListenPolicyAndTLS(t *testing.T) {
	for listen, ok := range map[string]bool{"127.0.0.1:0": true, "[::1]:0": true, "localhost:0": true, "0.0.0.0:7443": false, "10.1.2.3:7443": false} {
		err := (&Server{cfg: Config{Listen: listen}}).checkListen()
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "--insecure-listen")) {
			t.Errorf("listen %s: %v", listen, err)
		}
	}
	if err := (&Server{cfg: Config{Listen: "0.0.0.0:7443", InsecureListen: true}}).checkListen(); err != nil {
		t.Errorf("--insecure-listen: %v", err)
	}
	ts := newTestServer(t)
	cert, key := selfSigned(t)
	srv := ts.srv
	srv.cfg.Listen, srv.cfg.TLSCert, srv.cfg.TLSKey = "127.0.0.1:0", cert, key
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, func(a string) { addrs <- a }) }()
	addr := <-addrs
	pool := x509.NewCertPool()
	pemData, _ := os.ReadFile(cert)
	pool.AppendCertsFromPEM(pemData)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/v1/info", nil)
	req.Header.Set("Authorization", "Bearer "+ts.alice)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("over TLS: %d", resp.StatusCode)
	}
	if r, err := http.Get("http://" + addr + "/v1/info"); err == nil && r.StatusCode == http.StatusOK {
		t.Fatal("plain HTTP answered on the TLS port")
	}
	cancel()
	if err := <-done; err != nil && err != http.ErrServerClosed {
		t.Fatalf("shutdown: %v", err)
	}
}

func selfSigned(t *testing.T) (certPath, keyPath string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cornus test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return
}
