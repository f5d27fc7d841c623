-- Single sign-on per tenant (SQLite 0036_tenant_sso_trust): the tenant trusts the provider's verified e-mails.
ALTER TABLE tenant_sso ADD COLUMN trust_emails boolean NOT NULL DEFAULT false;
