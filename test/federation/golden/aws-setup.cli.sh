#!/bin/sh
# token-bridge aws-setup: IAM OIDC provider and role for https://bridge.example.com/tenant-a
# Trusted subjects (P:sub): did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao, did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK
# WARNING: IAM ignores the thumbprint when the jwks_uri host's certificate chains to a certificate authority AWS trusts (publicly trusted CAs): it then relies on its own CA store. The thumbprint is used only for self-signed or private-CA certificates; then add the new thumbprint (up to 5) before the top certificate of the chain changes, or STS refuses tokens with "OpenIDConnect provider's HTTPS certificate doesn't match configured thumbprint".
# WARNING: did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao: transferable did:keri roots get tokens only when the bridge's --trusted-roots file lists them with their keys
set -eu
PARTITION=aws
ACCOUNT_ID=123456789012

# 1. The OIDC provider: the issuer URL, the audience as client ID, the thumbprint(s).
aws iam create-open-id-connect-provider \
  --url https://bridge.example.com/tenant-a \
  --client-id-list sts.amazonaws.com \
  --thumbprint-list 9e99a48a9960b14926bb7f3b02e22da2b0ab7280 a053375bfe84e8b748782c7cee15827a6af5a405

# 2. The role and its trust policy (exact aud and sub).
POLICY_FILE="$(mktemp)"
trap 'rm -f "$POLICY_FILE"' EXIT
cat > "$POLICY_FILE" <<EOF
{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Principal": {
        "Federated": "arn:${PARTITION}:iam::${ACCOUNT_ID}:oidc-provider/bridge.example.com/tenant-a"
      },
      "Action": "sts:AssumeRoleWithWebIdentity",
      "Condition": {
        "StringEquals": {
          "bridge.example.com/tenant-a:aud": "sts.amazonaws.com",
          "bridge.example.com/tenant-a:sub": [
            "did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao",
            "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"
          ]
        }
      }
    }
  ]
}
EOF
aws iam create-role \
  --role-name ci-deploy \
  --assume-role-policy-document "file://$POLICY_FILE" \
  --query Role.Arn --output text
