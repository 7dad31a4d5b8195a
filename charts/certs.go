package charts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certificate is sprig's: a PEM certificate and its PEM key.
type certificate struct {
	Cert string
	Key  string
}

// genCA is sprig's genCA: a self-signed CA named cn, valid for days.
func genCA(cn string, days int) (certificate, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	return sign(tmpl, days, nil)
}

// genSignedCert is sprig's genSignedCert: a server certificate for cn, the
// addresses ips and the names dns, signed by ca.
func genSignedCert(cn string, ips, dns []any, days int, ca certificate) (certificate, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, v := range ips {
		ip := net.ParseIP(str(v))
		if ip == nil {
			return certificate{}, fmt.Errorf("genSignedCert: %q is not an IP address", str(v))
		}
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	for _, v := range dns {
		tmpl.DNSNames = append(tmpl.DNSNames, str(v))
	}
	return sign(tmpl, days, &ca)
}

// sign makes a key for tmpl and signs it by ca (itself when nil).
func sign(tmpl *x509.Certificate, days int, ca *certificate) (certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return certificate{}, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(time.Duration(days) * 24 * time.Hour)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certificate{}, err
	}
	parent, signer := tmpl, any(key)
	if ca != nil {
		cb, _ := pem.Decode([]byte(ca.Cert))
		kb, _ := pem.Decode([]byte(ca.Key))
		if cb == nil || kb == nil {
			return certificate{}, errors.New("genSignedCert: the CA is not PEM")
		}
		if parent, err = x509.ParseCertificate(cb.Bytes); err != nil {
			return certificate{}, fmt.Errorf("genSignedCert: CA: %w", err)
		}
		if signer, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
			return certificate{}, fmt.Errorf("genSignedCert: CA key: %w", err)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return certificate{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return certificate{}, err
	}
	return certificate{
		Cert: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		Key:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})),
	}, nil
}
