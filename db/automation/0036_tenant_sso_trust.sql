-- Single sign-on per tenant (issue 43): an owner may trust the provider's verified e-mails, so a local
-- account whose tenants all trust them becomes the SSO person with the same e-mail at their first sign-in.
ALTER TABLE `tenant_sso` ADD COLUMN `trust_emails` integer DEFAULT 0 NOT NULL;
