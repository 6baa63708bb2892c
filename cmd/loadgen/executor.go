package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

type inferenceReply struct {
	InferenceID  string `json:"inference_id"`
	ResponseHash string `json:"response_hash"`
}

// callExecutor sends the inference to the executor's fake endpoint and
// returns the response hash it reports.
func callExecutor(ctx context.Context, client *http.Client, baseURL, id, model string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"inference_id": id, "model": model, "prompt": "load driver prompt " + id})
	url := strings.TrimRight(baseURL, "/") + "/v1/inference"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("executor answered %d", res.StatusCode)
	}
	var reply inferenceReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return "", fmt.Errorf("executor reply: %w", err)
	}
	return reply.ResponseHash, nil
}
