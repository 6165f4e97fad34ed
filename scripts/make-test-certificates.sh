#!/usr/bin/env bash
# Makes the certificates the TLS tests use, in the folder given (created if missing): a CA, a server
# certificate it signed (localhost, 127.0.0.1, ::1), client certificates for mutual TLS, and the bad
# ones the tests expect to be refused: another CA and what it signed, an expired server certificate,
# a self-signed one. Keys are P-256 (ECDSA): fast handshakes, as a production deployment would pick.
# Usage: scripts/make-test-certificates.sh DIR
set -euo pipefail
dir="${1:?usage: $0 DIR}"
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# ca NAME SUBJECT: a self-signed CA
ca() {
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -subj "$2" -days 3650 -out "$1.pem" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# leaf NAME SUBJECT CA EXTENSIONS [openssl ca dates...]: a certificate CA signed
leaf() {
    local name="$1" subject="$2" issuer="$3" extensions="$4"
    key "$name.key"
    openssl req -new -key "$name.key" -subj "$subject" -out "$name.csr" 2>/dev/null
    printf '%s\n' "$extensions" >"$name.ext"
    openssl x509 -req -in "$name.csr" -CA "$issuer.pem" -CAkey "$issuer.key" -CAcreateserial -days 825 \
        -extfile "$name.ext" -out "$name.pem" 2>/dev/null
    rm -f "$name.csr" "$name.ext"
}

server_ext="basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"
client_ext="basicConstraints=CA:FALSE
extendedKeyUsage=clientAuth"

ca ca "/O=HomeRPC Tests/CN=HomeRPC Test CA"
ca other-ca "/O=Elsewhere/CN=Other CA"
leaf server "/O=HomeRPC Tests/CN=localhost" ca "$server_ext"
leaf client "/O=HomeRPC Tests/CN=reader" ca "$client_ext"
leaf accessory-client "/O=HomeRPC Tests/CN=kitchen-lamp" ca "$client_ext"
leaf other-client "/O=Elsewhere/CN=reader" other-ca "$client_ext"
leaf other-server "/O=Elsewhere/CN=localhost" other-ca "$server_ext"

# A second server certificate from the same CA: what a reload swaps in.
leaf renewed-server "/O=HomeRPC Tests/CN=localhost renewed" ca "$server_ext"

# Self-signed, trusted by nobody.
key self-signed.key
openssl req -x509 -new -key self-signed.key -subj "/CN=localhost" -days 30 -out self-signed.pem \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null

# Expired: signed by the CA, valid for one day in 2020 (openssl ca sets the dates x509 cannot).
key expired.key
openssl req -new -key expired.key -subj "/O=HomeRPC Tests/CN=localhost" -out expired.csr 2>/dev/null
mkdir -p ca-db && : >ca-db/index.txt && echo 1000 >ca-db/serial
cat >ca-db/openssl.cnf <<'CONF'
[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
default_md = sha256
policy = anything
copy_extensions = none
x509_extensions = server
[anything]
commonName = supplied
organizationName = optional
[server]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
CONF
openssl ca -batch -config ca-db/openssl.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
    -startdate 20200101000000Z -enddate 20200102000000Z -notext 2>/dev/null
rm -rf expired.csr ca-db ca.srl other-ca.srl
chmod 600 ./*.key
