// A real OpenLDAP server for the tests: Debian's slapd, started on free ports (ldap:// with
// StartTLS, and ldaps://) with a generated slapd.conf and a certificate from a certificate
// authority made here (openssl) in a temporary directory, and seeded with LDIF (slapadd). The
// directory's administrator (cn=admin) may change entries; cn=reader is the search account the
// chat server binds as.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Attribute, Change, Client } from 'ldapts';
import { tempDir } from './server.ts';

export const SLAPD = '/usr/sbin/slapd';
const SLAPADD = '/usr/sbin/slapadd';
export const slapdInstalled = () => existsSync(SLAPD) && existsSync(SLAPADD);

export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE = `ou=people,${SUFFIX}`;
export const READER_DN = `cn=reader,${SUFFIX}`;
export const READER_PASSWORD = 'reader-secret';
const ADMIN_DN = `cn=admin,${SUFFIX}`;
const ADMIN_PASSWORD = 'admin-secret';

// Active Directory's account flags, for an OpenLDAP entry to carry them.
const SCHEMA = `attributetype ( 1.3.6.1.4.1.55555.1.1 NAME 'userAccountControl' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.55555.2.1 NAME 'directoryAccount' SUP top AUXILIARY MAY userAccountControl )
`;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** A certificate authority and a certificate it signed for 127.0.0.1, in `dir`. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Test directory CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '1',
    '-extfile',
    'san.ext',
  );
}

export class Slapd {
  private constructor(
    private readonly process: ChildProcess,
    readonly url: string,
    /** The same directory over TLS from the first byte. */
    readonly ldapsUrl: string,
    /** The certificate authority of the directory's certificate (PEM). */
    readonly caFile: string,
  ) {}

  /** slapd with the base entries, the search account, and `ldif` (more entries). */
  static async start(ldif: string): Promise<Slapd> {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'db'));
    writeFileSync(path.join(dir, 'extra.schema'), SCHEMA);
    makeCertificates(dir);
    const conf = path.join(dir, 'slapd.conf');
    writeFileSync(
      conf,
      `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include ${dir}/extra.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile ${dir}/slapd.pid
TLSCACertificateFile ${dir}/ca.pem
TLSCertificateFile ${dir}/server.pem
TLSCertificateKeyFile ${dir}/server.key
database mdb
maxsize 10485760
suffix "${SUFFIX}"
rootdn "${ADMIN_DN}"
rootpw ${ADMIN_PASSWORD}
directory ${dir}/db
access to attrs=userPassword by self read by anonymous auth by * none
access to * by dn.exact="${READER_DN}" read by self read by * none
`,
    );
    const seed = path.join(dir, 'seed.ldif');
    writeFileSync(
      seed,
      `dn: ${SUFFIX}
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ${PEOPLE}
objectClass: organizationalUnit
ou: people

dn: ${READER_DN}
objectClass: person
cn: reader
sn: reader
userPassword: ${READER_PASSWORD}

${ldif}`,
    );
    execFileSync(SLAPADD, ['-f', conf, '-l', seed], { stdio: 'pipe' });
    const url = `ldap://127.0.0.1:${await freePort()}`;
    const ldapsUrl = `ldaps://127.0.0.1:${await freePort()}`;
    const child = spawn(SLAPD, ['-f', conf, '-h', `${url}/ ${ldapsUrl}/`, '-d', '0'], { stdio: 'ignore' });
    const slapd = new Slapd(child, url, ldapsUrl, path.join(dir, 'ca.pem'));
    for (let tries = 0; ; tries++) {
      try {
        await slapd.admin(async () => undefined);
        return slapd;
      } catch (err) {
        if (tries > 100 || child.exitCode !== null) {
          child.kill();
          throw err;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  private async admin<T>(use: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ url: this.url });
    try {
      await client.bind(ADMIN_DN, ADMIN_PASSWORD);
      return await use(client);
    } finally {
      await client.unbind();
    }
  }

  /** Replaces an attribute's values of an entry, as the directory's administrators would. */
  replace(dn: string, attribute: string, values: string[]): Promise<void> {
    return this.admin((c) => c.modify(dn, new Change({ operation: 'replace', modification: new Attribute({ type: attribute, values }) })));
  }

  remove(dn: string): Promise<void> {
    return this.admin((c) => c.del(dn));
  }

  stop(): void {
    this.process.kill();
  }
}
