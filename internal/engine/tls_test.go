package engine_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/testenv"
)

// enableTLS gives the cluster a self-signed certificate and turns ssl on.
func enableTLS(t *testing.T) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(cluster.DataDir, "test.crt"), filepath.Join(cluster.DataDir, "test.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	var st syscall.Stat_t
	syscall.Stat(cluster.DataDir, &st)
	os.Chown(certFile, int(st.Uid), int(st.Gid))
	os.Chown(keyFile, int(st.Uid), int(st.Gid))
	for _, q := range []string{"ALTER SYSTEM SET ssl_cert_file = 'test.crt'", "ALTER SYSTEM SET ssl_key_file = 'test.key'", "ALTER SYSTEM SET ssl = on"} {
		exec(t, q)
	}
	exec(t, "SELECT pg_reload_conf()")
	time.Sleep(300 * time.Millisecond)
	t.Cleanup(func() {
		for _, q := range []string{"ALTER SYSTEM RESET ssl", "ALTER SYSTEM RESET ssl_cert_file", "ALTER SYSTEM RESET ssl_key_file"} {
			exec(t, q)
		}
		exec(t, "SELECT pg_reload_conf()")
	})
}

// Over TCP the raw socket path works; with TLS, auto keeps Go's netpoller
// (and forcing raw I/O under TLS still works).
func TestTCPAndTLS(t *testing.T) {
	testenv.Slow(t)
	plain, _ := pgconn.ParseConfig(cluster.TCPConnString("postgres"))
	r := run(t, engine.Config{Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1}, Conn: plain, Program: program(t, 2, "select-only"), Clients: 2})
	if r.IO != engine.IORaw || r.Total.Transactions < 50 {
		t.Errorf("plain TCP: I/O %v, %d transactions; want raw and a working run", r.IO, r.Total.Transactions)
	}
	enableTLS(t)
	tlsCfg, err := pgconn.ParseConfig("host=127.0.0.1 port=" + itoa(cluster.Port) + " user=postgres dbname=postgres sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgconn.ConnectConfig(context.Background(), tlsCfg)
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	c.Close(context.Background())
	for _, mode := range []engine.IOMode{engine.IOAuto, engine.IORaw} {
		r := run(t, engine.Config{Settings: load.Settings{Duration: 500 * time.Millisecond, IO: mode.String(), MaxTries: 1}, Conn: tlsCfg, Program: program(t, 2, "select-only"), Clients: 2})
		want := engine.IONetpoll
		if mode == engine.IORaw {
			want = engine.IORaw
		}
		if r.IO != want || r.Total.Transactions < 50 || r.Total.FailedTotal() != 0 {
			t.Errorf("TLS with --io %v: used %v, %d transactions, %d failed", mode, r.IO, r.Total.Transactions, r.Total.FailedTotal())
		}
	}
}

// Many clients: auto switches to the netpoller beyond RawMaxClients; the
// netpoller path itself works.
func TestNetpollMode(t *testing.T) {
	r := run(t, engine.Config{Settings: load.Settings{Duration: 400 * time.Millisecond, IO: "netpoll", MaxTries: 1}, Program: program(t, 3, "select-only"), Clients: 3})
	if r.IO != engine.IONetpoll || r.Total.Transactions < 50 {
		t.Errorf("netpoll: I/O %v, %d transactions", r.IO, r.Total.Transactions)
	}
}
