# token-bridge aws-setup: IAM OIDC provider and role for https://bridge.example.com/tenant-a
# Trusted subjects (P:sub): did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao, did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK
# WARNING: IAM ignores the thumbprint when the jwks_uri host's certificate chains to a certificate authority AWS trusts (publicly trusted CAs): it then relies on its own CA store. The thumbprint is used only for self-signed or private-CA certificates; then add the new thumbprint (up to 5) before the top certificate of the chain changes, or STS refuses tokens with "OpenIDConnect provider's HTTPS certificate doesn't match configured thumbprint".
# WARNING: did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao: transferable did:keri roots get tokens only when the bridge's --trusted-roots file lists them with their keys

resource "aws_iam_openid_connect_provider" "token_bridge" {
  url             = "https://bridge.example.com/tenant-a"
  client_id_list  = ["sts.amazonaws.com"]
  thumbprint_list = ["9e99a48a9960b14926bb7f3b02e22da2b0ab7280", "a053375bfe84e8b748782c7cee15827a6af5a405"]
}

resource "aws_iam_role" "token_bridge" {
  name = "ci-deploy"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Federated = aws_iam_openid_connect_provider.token_bridge.arn }
      Action    = "sts:AssumeRoleWithWebIdentity"
      Condition = {
        StringEquals = {
          "bridge.example.com/tenant-a:aud" = "sts.amazonaws.com"
          "bridge.example.com/tenant-a:sub" = ["did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao", "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK"]
        }
      }
    }]
  })
}

output "token_bridge_role_arn" {
  value = aws_iam_role.token_bridge.arn
}
