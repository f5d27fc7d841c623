// Files imported with `with { type: "text" }` (migrations, demo data) are strings.
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.yaml" {
  const text: string;
  export default text;
}
