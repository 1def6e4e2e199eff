-- Monthly active customers and revenue by plan, excluding internal test accounts.
WITH active AS (
    SELECT
        c.id AS customer_id,
        c.plan_code,
        date_trunc('month', e.occurred_at) AS month
    FROM customers AS c
    JOIN events AS e ON e.customer_id = c.id
    WHERE e.kind IN ('login', 'api_call', 'export')
      AND c.email NOT LIKE '%@example.test'
      AND e.occurred_at >= now() - interval '12 months'
    GROUP BY 1, 2, 3
),
revenue AS (
    SELECT
        i.customer_id,
        date_trunc('month', i.issued_at) AS month,
        sum(i.amount_cents) FILTER (WHERE i.status = 'paid') / 100.0 AS paid,
        sum(i.amount_cents) FILTER (WHERE i.status = 'refunded') / 100.0 AS refunded
    FROM invoices AS i
    GROUP BY 1, 2
)
SELECT
    a.month,
    a.plan_code,
    count(DISTINCT a.customer_id) AS active_customers,
    coalesce(sum(r.paid), 0) AS paid,
    coalesce(sum(r.refunded), 0) AS refunded,
    round(coalesce(sum(r.paid), 0) / nullif(count(DISTINCT a.customer_id), 0), 2) AS arpu
FROM active AS a
LEFT JOIN revenue AS r ON r.customer_id = a.customer_id AND r.month = a.month
GROUP BY a.month, a.plan_code
ORDER BY a.month DESC, paid DESC;

CREATE INDEX CONCURRENTLY IF NOT EXISTS events_customer_time_idx
    ON events (customer_id, occurred_at DESC)
    WHERE kind IN ('login', 'api_call', 'export');
