export function renderWidget(label: string) {
  return <div>{label}</div>;
}
