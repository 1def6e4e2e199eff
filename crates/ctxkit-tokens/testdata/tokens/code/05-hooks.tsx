import { useCallback, useEffect, useMemo, useRef, useState } from "react";

export interface SearchResult {
  id: string;
  title: string;
  snippet: string;
  score: number;
}

type Status = "idle" | "loading" | "error" | "done";

export function useDebouncedValue<T>(value: T, delayMs = 250): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const handle = setTimeout(() => setDebounced(value), delayMs);
    return () => clearTimeout(handle);
  }, [value, delayMs]);
  return debounced;
}

export function useSearch(endpoint: string, query: string) {
  const [results, setResults] = useState<SearchResult[]>([]);
  const [status, setStatus] = useState<Status>("idle");
  const [error, setError] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);
  const debouncedQuery = useDebouncedValue(query.trim());

  const run = useCallback(async (q: string) => {
    controller.current?.abort();
    if (q.length < 2) {
      setResults([]);
      setStatus("idle");
      return;
    }
    const abort = new AbortController();
    controller.current = abort;
    setStatus("loading");
    try {
      const response = await fetch(`${endpoint}?q=${encodeURIComponent(q)}&limit=20`, { signal: abort.signal });
      if (!response.ok) throw new Error(`search failed: ${response.status} ${response.statusText}`);
      const body = (await response.json()) as { results: SearchResult[] };
      setResults(body.results.sort((a, b) => b.score - a.score));
      setStatus("done");
      setError(null);
    } catch (e) {
      if ((e as Error).name === "AbortError") return;
      setError((e as Error).message);
      setStatus("error");
    }
  }, [endpoint]);

  useEffect(() => {
    void run(debouncedQuery);
    return () => controller.current?.abort();
  }, [debouncedQuery, run]);

  const best = useMemo(() => results.find((r) => r.score > 0.8) ?? null, [results]);
  return { results, status, error, best, retry: () => run(debouncedQuery) };
}

export function SearchBox({ endpoint }: { endpoint: string }) {
  const [query, setQuery] = useState("");
  const { results, status, error, retry } = useSearch(endpoint, query);
  return (
    <div className="search">
      <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search documents…" aria-label="Search" />
      {status === "loading" && <span className="spinner" role="status" />}
      {status === "error" && (
        <p className="error">
          {error} <button onClick={retry}>Retry</button>
        </p>
      )}
      <ul>
        {results.map((r) => (
          <li key={r.id}>
            <strong>{r.title}</strong>
            <p dangerouslySetInnerHTML={{ __html: r.snippet }} />
          </li>
        ))}
      </ul>
    </div>
  );
}
