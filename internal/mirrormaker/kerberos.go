package mirrormaker

import "strings"

// krb5Login converts a Krb5LoginModule entry of sasl.jaas.config (GSSAPI,
// the Java client's default mechanism): principal and, with useKeyTab,
// keyTab become the sasl block's principal and keytab_file. Without a
// keytab the principal logs in with a password, from an environment
// variable: the Java client would have read it from a callback, or used
// the ticket cache of kinit, which catchup does not read.
func (fc *propFile) krb5Login(k string, mod jaasModule) {
	s := fc.cl.SASL
	s.Mechanism = "GSSAPI" // an unset sasl.mechanism means GSSAPI in the Java client
	fc.set(fc.at+".sasl.mechanism", k)
	var useKeyTab, keyTab, ticketCache bool
	for _, o := range mod.opts {
		switch v := strings.ToLower(o.value); o.key {
		case "principal":
			s.Principal = o.value
			fc.set(fc.at+".sasl.principal", k)
		case "keyTab":
			keyTab = true
			s.KeytabFile = o.value
		case "useKeyTab":
			useKeyTab = v == "true"
		case "useTicketCache":
			ticketCache = v == "true"
		case "storeKey", "doNotPrompt", "debug", "refreshKrb5Config", "isInitiator", "renewTGT", "clearPass":
			fc.note(k, NoticeNotApplicable, "option %s of %s: catchup logs in with the keytab or password itself and renews its tickets", o.key, mod.class)
		default:
			fc.note(k, NoticeNotApplicable, "option %s of %s is not used by catchup", o.key, mod.class)
		}
	}
	if s.Principal == "" {
		fc.note(k, NoticeInvalid, "%s has no principal option: add principal=\"NAME@REALM\", the principal catchup logs in as", mod.class)
		fc.cover(fc.at + ".sasl")
		return
	}
	switch {
	case useKeyTab && keyTab:
		fc.set(fc.at+".sasl.keytab_file", k)
		fc.note(k, NoticeMapped, "→ %s.sasl.principal and %s.sasl.keytab_file (the keytab stays where it is; catchup reads it)", fc.at, fc.at)
		return
	case keyTab:
		s.KeytabFile = ""
		fc.note(k, NoticeWarning, "keyTab without useKeyTab=true: the Java client ignored the keytab, and so does catchup")
	case useKeyTab:
		fc.note(k, NoticeWarning, "useKeyTab=true without keyTab: the Java client read the default keytab; catchup needs it named")
	}
	env := fc.c.passwordEnv(fc.cl.Name)
	s.PasswordEnv = env
	fc.set(fc.at+".sasl.password_env", k)
	why := "names no keytab"
	if ticketCache {
		why = "uses the ticket cache of kinit, which catchup does not read"
	}
	fc.note(k, NoticeAction, "→ %s.sasl.principal; the entry %s: set %s.sasl.keytab_file to the principal's keytab, or export %s "+
		"with the principal's password before running catchup", fc.at, why, fc.at, env)
}

// kerberosService converts sasl.kerberos.service.name, the first part of
// the brokers' service principal.
func (fc *propFile) kerberosService(k, v string) {
	if m, _ := fc.get("sasl.mechanism"); m != "" && !strings.EqualFold(m, "GSSAPI") {
		fc.note(k, NoticeNotApplicable, "used only with GSSAPI (Kerberos), and sasl.mechanism is %s", m)
		return
	}
	fc.cl.SASL.ServiceName = v
	fc.set(fc.at+".sasl.service_name", k)
	fc.note(k, NoticeMapped, "→ %s.sasl.service_name", fc.at)
}
