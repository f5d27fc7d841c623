// s3rver does not check SigV4 signatures, so our signer is checked against Bun's own S3Client presign
// (same canonical request), for keys that need encoding and for extra signed query parameters.
import { expect, test } from "bun:test";
import { S3Client } from "bun";
import { presign, uriEncode } from "../../../src/automation/blobs/s3-sign";

const creds = { endpoint: "http://127.0.0.1:9000", region: "eu-west-1", bucket: "my-bucket", accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const dateOf = (url: URL) => new Date(url.searchParams.get("X-Amz-Date")!.replace(/(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/, "$1-$2-$3T$4:$5:$6Z"));

test("presigned URLs equal Bun's S3Client.presign for the same request and time", () => {
  const bun = new S3Client(creds);
  for (const [key, method] of [["a b/ü+x.txt", "PUT"], ["prefix/sha256/ab/abc", "GET"], ["k~-_.!*'()", "DELETE"]] as const) {
    const theirs = new URL(bun.presign(key, { method, expiresIn: 300 }));
    const ours = new URL(presign(creds, { method, key, expiresInS: 300, now: dateOf(theirs) }));
    expect(ours.pathname).toBe(theirs.pathname);
    expect(ours.searchParams.get("X-Amz-Signature")).toBe(theirs.searchParams.get("X-Amz-Signature"));
  }
});

test("uriEncode keeps only unreserved characters (and / in keys)", () => {
  expect(uriEncode("a b+c/d~e")).toBe("a%20b%2Bc%2Fd~e");
  expect(uriEncode("a b+c/d", true)).toBe("a%20b%2Bc/d");
});
