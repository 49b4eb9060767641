// A SAML 2.0 identity provider for tests, on a free port: its single sign-on URL takes an
// AuthnRequest by the HTTP-Redirect binding (deflated, base64) and answers, as real IdPs do, with
// a page whose form posts a Response to the request's assertion consumer service. The Response's
// assertion is signed with xml-crypto under a key pair and certificate made here (openssl).
// `nextLogin` says who logs in; `tamper` bends the next answers to test what a service provider
// must refuse.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { tempDir } from './server.ts';

export interface SamlPerson {
  nameId: string;
  attributes: Record<string, string>;
}

/** What the next answers do differently from an honest IdP's. */
export interface SamlTamper {
  /** Signed with a key whose certificate the service provider was never given. */
  rogueKey?: boolean;
  /** Signs the assertion, then changes the address in it. */
  alterAfterSigning?: string;
  /** Signs nothing. */
  unsigned?: boolean;
  /** Signs the whole Response instead of the assertion. */
  signResponse?: boolean;
  issuer?: string;
  audience?: string;
  /** Issued this many seconds ago, and valid for five minutes from then. */
  issuedSecondsAgo?: number;
  /** The assertion's ID, to replay one. */
  assertionId?: string;
}

/** The AuthnRequest as the IdP read it. */
export interface SeenRequest {
  id: string;
  issuer: string;
  acsUrl: string;
  relayState: string;
}

const xmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export const opensslInstalled = () => spawnSync('openssl', ['version']).status === 0;

function keyPair(dir: string, name: string): { key: string; cert: string } {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '1', '-subj', `/CN=${name}`],
    { cwd: dir, stdio: 'pipe' },
  );
  return { key: readFileSync(path.join(dir, `${name}.key`), 'utf8'), cert: readFileSync(path.join(dir, `${name}.pem`), 'utf8') };
}

export class TestSamlIdp {
  nextLogin: SamlPerson | null = null;
  tamper: SamlTamper = {};
  /** The last AuthnRequest received. */
  lastRequest: SeenRequest | null = null;
  /** The last assertion's ID. */
  lastAssertionId = '';

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    readonly entityId: string,
    private readonly signing: { key: string; cert: string },
    private readonly rogue: { key: string; cert: string },
  ) {
    server.on('request', (req, res) => this.answer(req, res));
  }

  static async start(): Promise<TestSamlIdp> {
    const dir = tempDir();
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return new TestSamlIdp(server, `${base}/sso`, `${base}/metadata`, keyPair(dir, 'idp'), keyPair(dir, 'rogue'));
  }

  /** The certificate the service provider is configured with. */
  get cert(): string {
    return this.signing.cert;
  }

  close(): void {
    this.server.close();
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const samlRequest = url.searchParams.get('SAMLRequest');
    if (url.pathname !== '/sso' || !samlRequest || !this.nextLogin) {
      res.writeHead(400).end('not a login this IdP can answer');
      return;
    }
    const xml = inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('utf8');
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(xml)?.[1] ?? '';
    this.lastRequest = {
      id: attr('ID'),
      acsUrl: attr('AssertionConsumerServiceURL'),
      issuer: /<(?:\w+:)?Issuer[^>]*>([^<]*)</.exec(xml)?.[1] ?? '',
      relayState: url.searchParams.get('RelayState') ?? '',
    };
    const response = this.response(this.lastRequest, this.nextLogin);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<form method="post" action="${xmlText(this.lastRequest.acsUrl)}">
<input type="hidden" name="SAMLResponse" value="${Buffer.from(response).toString('base64')}">
<input type="hidden" name="RelayState" value="${xmlText(this.lastRequest.relayState)}">
<button>Continue</button></form>`);
  }

  private response(request: SeenRequest, person: SamlPerson): string {
    const t = this.tamper;
    const issued = Date.now() - (t.issuedSecondsAgo ?? 0) * 1000;
    const at = (offsetSeconds: number) => new Date(issued + offsetSeconds * 1000).toISOString();
    const issuer = xmlText(t.issuer ?? this.entityId);
    const assertionId = t.assertionId ?? `_a${randomBytes(16).toString('hex')}`;
    this.lastAssertionId = assertionId;
    const attributes = Object.entries(person.attributes)
      .map(([name, value]) => `<saml:Attribute Name="${xmlText(name)}"><saml:AttributeValue>${xmlText(value)}</saml:AttributeValue></saml:Attribute>`)
      .join('');
    const assertion =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${at(0)}">` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${xmlText(person.nameId)}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${xmlText(request.id)}" NotOnOrAfter="${at(300)}" Recipient="${xmlText(request.acsUrl)}"/></saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${at(-5)}" NotOnOrAfter="${at(300)}"><saml:AudienceRestriction><saml:Audience>${xmlText(t.audience ?? request.issuer)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="_s${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
      `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` +
      '</saml:Assertion>';
    const response =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${at(0)}" Destination="${xmlText(request.acsUrl)}" InResponseTo="${xmlText(request.id)}">` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
      assertion +
      '</samlp:Response>';
    if (t.unsigned) return response;
    const signed = t.signResponse ? this.sign(response, 'Response') : this.sign(response, 'Assertion');
    return t.alterAfterSigning
      ? signed.replace(`<saml:AttributeValue>${xmlText(person.attributes.email ?? '')}<`, `<saml:AttributeValue>${xmlText(t.alterAfterSigning)}<`)
      : signed;
  }

  /** An enveloped signature over the element, placed after its Issuer as the schema wants. */
  private sign(xml: string, element: 'Response' | 'Assertion'): string {
    const { key, cert } = this.tamper.rogueKey ? this.rogue : this.signing;
    const sig = new SignedXml({
      privateKey: key,
      publicCert: cert,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    const target = `//*[local-name(.)='${element}']`;
    sig.addReference({
      xpath: target,
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    });
    sig.computeSignature(xml, { location: { reference: `${target}/*[local-name(.)='Issuer']`, action: 'after' } });
    return sig.getSignedXml();
  }
}
