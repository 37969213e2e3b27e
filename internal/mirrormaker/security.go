package mirrormaker

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafka-catchup/catchup/internal/config"
)

// tls and sasl report what security.protocol turns on.
func (fc *propFile) tls() bool { return strings.HasSuffix(fc.protocol, "SSL") }

func (fc *propFile) sasl() bool { return strings.HasPrefix(fc.protocol, "SASL_") }

// security reads security.protocol first: it decides whether the ssl.* and
// sasl.* keys mean anything.
func (fc *propFile) security() {
	v, ok := fc.get("security.protocol")
	fc.protocol = strings.ToUpper(v)
	if !ok {
		fc.protocol = "PLAINTEXT"
	}
	switch fc.protocol {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		fc.note("security.protocol", NoticeInvalid, "%q is not a security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", v)
		fc.protocol = "PLAINTEXT"
		return
	}
	if fc.tls() {
		fc.cl.TLS = &config.TLS{}
		fc.set(fc.at+".tls", "security.protocol")
	}
	if fc.sasl() {
		fc.cl.SASL = &config.SASL{}
		fc.set(fc.at+".sasl", "security.protocol")
	}
}

func (fc *propFile) securityNote(k string) {
	switch fc.protocol {
	case "PLAINTEXT":
		if v, _ := fc.get(k); strings.EqualFold(v, "PLAINTEXT") {
			fc.note(k, NoticeMapped, "→ no %s.tls or %s.sasl block: plaintext, as catchup's default", fc.at, fc.at)
		}
	case "SSL":
		fc.note(k, NoticeMapped, "→ %s.tls: TLS, with the broker's certificate and host name verified", fc.at)
	case "SASL_PLAINTEXT":
		fc.note(k, NoticeMapped, "→ %s.sasl, without TLS", fc.at)
	case "SASL_SSL":
		fc.note(k, NoticeMapped, "→ %s.tls and %s.sasl", fc.at, fc.at)
	}
}

// saslKey converts sasl.mechanism, sasl.jaas.config,
// sasl.client.callback.handler.class and sasl.kerberos.service.name.
func (fc *propFile) saslKey(k string) {
	if !fc.sasl() {
		fc.note(k, NoticeNotApplicable, "security.protocol is %s, so the Java client did not use SASL either", fc.protocol)
		return
	}
	v, _ := fc.get(k)
	s := fc.cl.SASL
	switch k {
	case "sasl.mechanism":
		switch m := strings.ToUpper(v); m {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM":
			s.Mechanism = m
			fc.set(fc.at+".sasl.mechanism", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.mechanism", fc.at)
		case "GSSAPI":
			s.Mechanism = m
			fc.set(fc.at+".sasl.mechanism", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.mechanism (Kerberos; the realm's KDCs from krb5_conf, default $KRB5_CONFIG "+
				"or /etc/krb5.conf: set %s.sasl.krb5_conf if MirrorMaker ran with -Djava.security.krb5.conf)", fc.at, fc.at)
		case "OAUTHBEARER":
			s.Mechanism = m
			fc.set(fc.at+".sasl.mechanism", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.mechanism: the token from sasl.oauthbearer.token.endpoint.url, asked with the client "+
				"credentials of sasl.jaas.config", fc.at)
		default:
			fc.note(k, NoticeInvalid, "%q is not a SASL mechanism; catchup supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, AWS_MSK_IAM, OAUTHBEARER and GSSAPI", v)
			fc.cover(fc.at + ".sasl")
		}
	case "sasl.jaas.config":
		fc.jaas(k, v)
	case "sasl.oauthbearer.token.endpoint.url", "sasl.login.callback.handler.class", "sasl.oauthbearer.client.credentials.client.id",
		"sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.scope":
		fc.oauthKey(k, v)
	case "sasl.kerberos.service.name":
		fc.kerberosService(k, v)
	case "sasl.client.callback.handler.class":
		if v == "software.amazon.msk.auth.iam.IAMClientCallbackHandler" {
			fc.note(k, NoticeMapped, "implied by sasl.mechanism=AWS_MSK_IAM, which catchup signs with the standard AWS configuration")
			return
		}
		fc.note(k, NoticeNotApplicable, "%s", whyJavaPlugin)
	}
}

// Login modules of sasl.jaas.config and the mechanisms they serve.
const (
	plainModule    = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule    = "org.apache.kafka.common.security.scram.ScramLoginModule"
	mskIAMModule   = "software.amazon.msk.auth.iam.IAMLoginModule"
	kerberosModule = "com.sun.security.auth.module.Krb5LoginModule"
	oauthModule    = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// jaas takes the username from sasl.jaas.config and keeps the password out
// of the YAML: the SASL block names an environment variable instead.
func (fc *propFile) jaas(k, v string) {
	mods, err := parseJAAS(v)
	if err != nil {
		fc.note(k, NoticeInvalid, "%v", err)
		fc.cover(fc.at + ".sasl")
		return
	}
	if len(mods) > 1 {
		fc.note(k, NoticeWarning, "%d login modules: catchup uses the first, %s", len(mods), mods[0].class)
	}
	mod, s := mods[0], fc.cl.SASL
	mech, _ := fc.get("sasl.mechanism")
	mech = strings.ToUpper(mech)
	want := map[string][]string{plainModule: {"PLAIN"}, scramModule: {"SCRAM-SHA-256", "SCRAM-SHA-512"}, mskIAMModule: {"AWS_MSK_IAM"},
		kerberosModule: {"GSSAPI", ""}, oauthModule: {"OAUTHBEARER"}}[mod.class]
	switch {
	case want == nil:
		fc.note(k, NoticeRefused, "login module %s is Java code that catchup cannot run; catchup supports %s, %s, %s, %s and %s",
			mod.class, plainModule, scramModule, mskIAMModule, oauthModule, kerberosModule)
		fc.cover(fc.at + ".sasl")
		return
	case mech != "" && !slices.Contains(want, mech):
		named := slices.DeleteFunc(slices.Clone(want), func(m string) bool { return m == "" }) // "": sasl.mechanism unset
		fc.note(k, NoticeInvalid, "login module %s does not go with sasl.mechanism=%s (it serves %s)", mod.class, mech, strings.Join(named, " or "))
		fc.cover(fc.at + ".sasl")
		return
	case mod.class == oauthModule:
		fc.oauthJAAS(k, mod)
		return
	case mod.class == kerberosModule:
		fc.krb5Login(k, mod)
		return
	}
	if mod.class == mskIAMModule {
		for _, o := range mod.opts {
			switch o.key {
			case "awsProfileName":
				fc.note(k, NoticeAction, "option awsProfileName: catchup signs with the standard AWS configuration: run it with AWS_PROFILE=%s", o.value)
			case "awsRoleArn":
				fc.note(k, NoticeAction, "option awsRoleArn: catchup signs with the standard AWS configuration: "+
					"name the role in a profile (role_arn = %s in ~/.aws/config) and run catchup with AWS_PROFILE set to it", o.value)
			default:
				fc.note(k, NoticeNotApplicable, "option %s of %s is not used by catchup, which signs with the standard AWS configuration", o.key, mod.class)
			}
		}
		fc.note(k, NoticeMapped, "→ %s.sasl (AWS_MSK_IAM: no username or password)", fc.at)
		return
	}
	var password *string
	fc.set(fc.at+".sasl.username", k)
	for _, o := range mod.opts {
		switch o.key {
		case "username":
			s.Username = o.value
		case "password":
			password = &o.value
		default:
			fc.note(k, NoticeNotApplicable, "option %s of the login module is not used by catchup", o.key)
		}
	}
	fc.note(k, NoticeMapped, "→ %s.sasl.username", fc.at)
	env := fc.c.passwordEnv(fc.cl.Name)
	s.PasswordEnv = env
	fc.set(fc.at+".sasl.password_env", k)
	if password == nil {
		fc.note(k, NoticeAction, "holds no password: export %s with the password of %s before running catchup", env, fc.cl.Name)
		return
	}
	fc.c.passwords[env] = config.NewSecret(*password)
	fc.note(k, NoticeAction, "the password is not copied into the YAML, which names the environment variable %s instead "+
		"(%s.sasl.password_env): export it with the password before `catchup run` "+
		"(catchup mirrormaker itself uses the one in this file when the variable is not set)", env, fc.at)
}

// Login callback handlers of the Java client's standard OAuth login: the
// client credentials grant at sasl.oauthbearer.token.endpoint.url (KIP-768;
// the package moved in Kafka 3.4).
var oauthHandlers = []string{
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
}

// whyUnsecuredOAuth is why the Java client's default OAUTHBEARER login is refused.
const whyUnsecuredOAuth = "the Java client's unsecured login, which makes up an unsigned token itself (for tests; " +
	"OAuthBearerUnsecuredLoginCallbackHandler): catchup does not make tokens; give it the identity provider's token endpoint " +
	"(sasl.oauthbearer.token.endpoint.url and clientId, clientSecret in sasl.jaas.config), or write %s.sasl.token_file " +
	"(docs/configuration.md, OAUTHBEARER)"

// oauth reports whether the file's SASL mechanism is OAUTHBEARER.
func (fc *propFile) oauth() bool {
	m, _ := fc.get("sasl.mechanism")
	return strings.EqualFold(strings.TrimSpace(m), "OAUTHBEARER")
}

// oauthKey converts the Java client's OAuth keys (KIP-768 and KIP-1139).
func (fc *propFile) oauthKey(k, v string) {
	if !fc.oauth() {
		if k == "sasl.login.callback.handler.class" {
			fc.note(k, NoticeNotApplicable, "%s", whyJavaPlugin)
			return
		}
		fc.note(k, NoticeNotApplicable, "used only with sasl.mechanism=OAUTHBEARER")
		return
	}
	s := fc.cl.SASL
	switch k {
	case "sasl.oauthbearer.token.endpoint.url":
		u, err := url.Parse(strings.TrimSpace(v))
		switch {
		case err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
			s.TokenEndpointURL = u.String()
			fc.set(fc.at+".sasl.token_endpoint_url", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.token_endpoint_url: catchup asks it for tokens with the client credentials grant", fc.at)
		case err == nil && u.Scheme == "file" && u.Path != "":
			s.TokenFile = u.Path
			fc.set(fc.at+".sasl.token_file", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.token_file: the token is read from that file at each connection", fc.at)
		default:
			fc.note(k, NoticeInvalid, "not an http(s):// token endpoint nor a file:// token file URL")
			fc.cover(fc.at + ".sasl")
		}
	case "sasl.login.callback.handler.class":
		if slices.Contains(oauthHandlers, strings.TrimSpace(v)) {
			fc.note(k, NoticeMapped, "the Java client's standard OAuth login (a token from sasl.oauthbearer.token.endpoint.url), "+
				"which catchup does itself")
			return
		}
		fc.note(k, NoticeRefused, "%s is Java code that catchup cannot run; catchup gets OAUTHBEARER tokens from a token endpoint "+
			"with the client credentials grant, or from a file: write %s.sasl with token_endpoint_url, client_id and password_env, "+
			"or token_file (docs/configuration.md, OAUTHBEARER)", strings.TrimSpace(v), fc.at)
		fc.cover(fc.at + ".sasl")
	case "sasl.oauthbearer.client.credentials.client.id":
		s.ClientID = v
		fc.set(fc.at+".sasl.client_id", k)
		fc.note(k, NoticeMapped, "→ %s.sasl.client_id", fc.at)
	case "sasl.oauthbearer.client.credentials.client.secret":
		fc.clientSecret(k, &v)
	case "sasl.oauthbearer.scope":
		s.Scope = v
		fc.set(fc.at+".sasl.scope", k)
		fc.note(k, NoticeMapped, "→ %s.sasl.scope", fc.at)
	}
}

// oauthJAAS converts the options of OAuthBearerLoginModule: clientId,
// clientSecret and scope of the client credentials login; the options of
// the unsecured login and SASL extensions are refused.
func (fc *propFile) oauthJAAS(k string, mod jaasModule) {
	s := fc.cl.SASL
	var secret *string
	var unsecured, extensions bool
	for _, o := range mod.opts {
		switch {
		case o.key == "clientId":
			s.ClientID = o.value
			fc.set(fc.at+".sasl.client_id", k)
		case o.key == "clientSecret":
			secret = &o.value
		case o.key == "scope":
			s.Scope = o.value
			fc.set(fc.at+".sasl.scope", k)
		case strings.HasPrefix(o.key, "unsecuredLogin"):
			unsecured = true
		case strings.HasPrefix(o.key, "extension_"):
			extensions = true
		case jaasOptionName(o.key):
			fc.note(k, NoticeNotApplicable, "option %s of the login module is not used by catchup", o.key)
		default:
			fc.note(k, NoticeNotApplicable, "an option of the login module whose name is not a name is not used by catchup")
		}
	}
	switch {
	case unsecured:
		fc.note(k, NoticeRefused, "options unsecuredLogin…: "+whyUnsecuredOAuth, fc.at)
		fc.cover(fc.at + ".sasl")
		return
	case extensions:
		fc.note(k, NoticeRefused, "options extension_…: SASL extensions (Confluent Cloud's logicalCluster and identityPoolId, "+
			"for example), which catchup does not send; the broker would refuse the login without them")
		fc.cover(fc.at + ".sasl")
		return
	}
	if s.ClientID != "" || s.Scope != "" {
		fc.note(k, NoticeMapped, "→ %s.sasl.client_id and scope (options clientId and scope)", fc.at)
	}
	if secret != nil {
		fc.clientSecret(k, secret)
	}
}

// clientSecret keeps the OAuth client secret of k out of the YAML, as a
// password: the SASL block names an environment variable instead.
func (fc *propFile) clientSecret(k string, secret *string) {
	env := fc.c.passwordEnv(fc.cl.Name)
	fc.cl.SASL.PasswordEnv = env
	fc.set(fc.at+".sasl.password_env", k)
	fc.c.passwords[env] = config.NewSecret(*secret)
	fc.note(k, NoticeAction, "the client secret is not copied into the YAML, which names the environment variable %s instead "+
		"(%s.sasl.password_env): export it with the secret before `catchup run` "+
		"(catchup mirrormaker itself uses the one in this file when the variable is not set)", env, fc.at)
}

// jaasOptionName reports whether a JAAS option's name is a plain name
// (letters, digits, '_', '.', '-'): a quote broken in the file can turn part
// of a secret into an option name, which no notice may repeat.
func jaasOptionName(s string) bool {
	return s != "" && len(s) <= 64 && strings.IndexFunc(s, func(r rune) bool {
		name := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
		return !name
	}) < 0
}

// passwordEnv names the environment variable of cluster's password,
// CATCHUP_<CLUSTER>_PASSWORD, distinct for each cluster even when two names
// differ only in characters that a variable name cannot hold.
func (c *converter) passwordEnv(cluster string) string {
	base := "CATCHUP_" + envName(cluster)
	env := base + "_PASSWORD"
	for k := 2; c.envs[env] != "" && c.envs[env] != cluster; k++ {
		env = fmt.Sprintf("%s_%d_PASSWORD", base, k)
	}
	c.envs[env] = cluster
	return env
}

// envName turns a cluster name into the middle of an environment variable name.
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// ssl converts the ssl.* keys. catchup reads PEM files only, so a JKS or
// PKCS12 store needs converting, and the store passwords are never needed.
func (fc *propFile) ssl(k string) {
	if !fc.tls() {
		fc.note(k, NoticeNotApplicable, "security.protocol is %s, so the Java client did not use TLS either", fc.protocol)
		return
	}
	v, _ := fc.get(k)
	t := fc.cl.TLS
	tlsAt := fc.at + ".tls"
	storeType := func(key string) string {
		typ, _ := fc.get(key)
		if typ == "" {
			return "JKS"
		}
		return strings.ToUpper(typ)
	}
	switch k {
	case "ssl.truststore.location":
		switch typ := storeType("ssl.truststore.type"); typ {
		case "PEM":
			t.CAFile = v
			fc.set(tlsAt+".ca_file", k)
			fc.note(k, NoticeMapped, "→ %s.ca_file", tlsAt)
		case "JKS", "PKCS12":
			pem := swapExt(v, ".pem")
			if isFile(pem) {
				t.CAFile = pem
				fc.set(tlsAt+".ca_file", k)
				fc.note(k, NoticeMapped, "→ %s.ca_file: %s, the PEM copy of this %s trust store", tlsAt, pem, typ)
				return
			}
			cmd := fmt.Sprintf("keytool -list -rfc -keystore %s > %s", v, pem)
			if typ == "PKCS12" {
				cmd = fmt.Sprintf("openssl pkcs12 -in %s -nokeys -out %s", v, pem)
			}
			fc.note(k, NoticeAction, "catchup reads PEM files, not %s trust stores: convert it with `%s` (it asks for "+
				"ssl.truststore.password), then set ca_file: %s under %s (catchup mirrormaker does once that file exists); "+
				"until then the brokers' certificates are verified against the system's roots", typ, cmd, pem, tlsAt)
		default:
			fc.note("ssl.truststore.type", NoticeInvalid, "%q is not a trust store type; use JKS, PKCS12 or PEM", typ)
		}
	case "ssl.keystore.location":
		fc.keystore(k, v, storeType("ssl.keystore.type"))
	case "ssl.truststore.type", "ssl.keystore.type":
		loc := strings.Replace(k, ".type", ".location", 1)
		switch {
		case !fc.has(loc):
			fc.note(k, NoticeNotApplicable, "there is no %s", loc)
		case slices.Contains([]string{"JKS", "PKCS12", "PEM"}, storeType(k)):
			fc.note(k, NoticeMapped, "says how %s is converted (see there)", loc)
		}
	case "ssl.truststore.password":
		fc.note(k, NoticeNotApplicable, "it opens the trust store; the PEM file that catchup reads needs no password")
	case "ssl.keystore.password", "ssl.key.password":
		fc.note(k, NoticeNotApplicable, "it opens the key store; catchup reads the client key from an unencrypted PEM file "+
			"(key_file): make that file readable only by the user that runs catchup")
	case "ssl.truststore.certificates":
		fc.note(k, NoticeAction, "catchup reads certificates from a file: save these PEM certificates to a file and set ca_file to it under %s", tlsAt)
	case "ssl.keystore.certificate.chain", "ssl.keystore.key":
		fc.note(k, NoticeAction, "catchup reads the client certificate and key from files: save the certificate chain "+
			"and the unencrypted key to PEM files and set cert_file and key_file under %s", tlsAt)
	case "ssl.endpoint.identification.algorithm":
		switch strings.ToLower(v) {
		case "https":
			fc.note(k, NoticeMapped, "catchup always verifies the broker's host name")
		case "":
			fc.note(k, NoticeWarning, "empty: the Java client checked the broker's certificate chain but not its host name; "+
				"catchup verifies both, because skipping only the name is not possible and skipping both "+
				"(insecure_skip_verify) would accept any certificate: if the certificates do not name the brokers, "+
				"set server_name under %s to the name they carry", tlsAt)
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use https or an empty value", v)
		}
	}
}

// keystore converts ssl.keystore.location, the client certificate.
func (fc *propFile) keystore(k, v, typ string) {
	t, tlsAt := fc.cl.TLS, fc.at+".tls"
	cert, key := swapExt(v, ".cert.pem"), swapExt(v, ".key.pem")
	var steps string
	switch typ {
	case "PEM":
		if fc.has("ssl.key.password") {
			fc.note(k, NoticeAction, "its private key is encrypted (ssl.key.password), which catchup cannot read: decrypt it with "+
				"`openssl pkey -in %s -out %s`, then set cert_file: %s and key_file: %s under %s", v, key, v, key, tlsAt)
			return
		}
		t.CertFile, t.KeyFile = v, v
		fc.set(tlsAt+".cert_file", k)
		fc.set(tlsAt+".key_file", k)
		fc.note(k, NoticeMapped, "→ %s.cert_file and key_file (the same file holds both)", tlsAt)
		return
	case "JKS":
		p12 := swapExt(v, ".p12")
		steps = fmt.Sprintf("`keytool -importkeystore -srckeystore %s -destkeystore %s -deststoretype PKCS12`, then "+
			"`openssl pkcs12 -in %s -clcerts -nokeys -out %s` and `openssl pkcs12 -in %s -nocerts -nodes -out %s`", v, p12, p12, cert, p12, key)
	case "PKCS12":
		steps = fmt.Sprintf("`openssl pkcs12 -in %s -clcerts -nokeys -out %s` and `openssl pkcs12 -in %s -nocerts -nodes -out %s`", v, cert, v, key)
	default:
		fc.note("ssl.keystore.type", NoticeInvalid, "%q is not a key store type; use JKS, PKCS12 or PEM", typ)
		return
	}
	if isFile(cert) && isFile(key) {
		t.CertFile, t.KeyFile = cert, key
		fc.set(tlsAt+".cert_file", k)
		fc.set(tlsAt+".key_file", k)
		fc.note(k, NoticeMapped, "→ %s.cert_file: %s and key_file: %s, the PEM copies of this %s key store", tlsAt, cert, key, typ)
		return
	}
	fc.note(k, NoticeAction, "catchup reads PEM files, not %s key stores: convert it with %s (they ask for ssl.keystore.password; "+
		"make the key file readable only by catchup's user), then set cert_file: %s and key_file: %s under %s "+
		"(catchup mirrormaker does once both files exist)", typ, steps, cert, key, tlsAt)
}

// swapExt replaces the extension of path with ext.
func swapExt(path, ext string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ext
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
